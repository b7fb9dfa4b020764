import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaderTasks, type Leading } from './leader-tasks.js';

/** A task that records its terms and runs until aborted. */
function task(name: string) {
  const terms: Leading[] = [];
  return {
    terms,
    name,
    run: (leading: Leading) => {
      terms.push(leading);
      return new Promise<void>((resolve) => leading.signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

describe('LeaderTasks', () => {
  it('starts each task once per term, aborts and waits for it when the term ends', async () => {
    const tasks = new LeaderTasks();
    const a = task('a');
    tasks.add(a);
    tasks.lead(() => {});
    tasks.lead(() => {}); // the same term
    assert.equal(a.terms.length, 1);
    await tasks.standBy();
    assert.equal(a.terms[0]!.signal.aborted, true);
    tasks.lead(() => {});
    assert.equal(a.terms.length, 2, 'a new term starts it again');
    await tasks.standBy();
  });

  it('starts a task added during a term at once, with the term’s fence', async () => {
    const tasks = new LeaderTasks();
    let checked = 0;
    tasks.lead(() => checked++);
    const b = task('b');
    tasks.add(b);
    assert.equal(b.terms.length, 1);
    b.terms[0]!.assertLeading();
    assert.equal(checked, 1);
    await tasks.standBy();
    assert.equal(b.terms[0]!.signal.aborted, true);
  });

  it('logs a task that fails during its term, and does not start it again before the next', async () => {
    const errors: string[] = [];
    const tasks = new LeaderTasks({ debug() {}, info() {}, warn() {}, error: (m) => errors.push(m) });
    let runs = 0;
    tasks.add({ name: 'broken', run: () => (runs++, Promise.reject(new Error('boom'))) });
    tasks.lead(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    await tasks.standBy();
    assert.deepEqual([runs, errors], [1, ['leader task broken failed: boom']]);
  });
});
