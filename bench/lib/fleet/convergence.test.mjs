import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConvergenceWatch } from './convergence.mjs';

/** One server's informer, fed by hand: its cache, and the events it sends. */
function fakeServer() {
  const store = new Map();
  let listener = () => {};
  const informer = {
    events$: { subscribe: (fn) => (listener = fn) },
    list: (namespace) => [...store.values()].filter((w) => w.metadata.namespace === namespace),
    get: (key) => store.get(key),
  };
  const put = (namespace, name, { round, generation, observed }) => {
    const widget = {
      metadata: { namespace, name, generation },
      spec: { round },
      ...(observed === undefined ? {} : { status: { observedGeneration: observed } }),
    };
    const type = store.has(`${namespace}/${name}`) ? 'updated' : 'added';
    store.set(`${namespace}/${name}`, widget);
    listener({ type, object: widget });
  };
  return { server: { informer, members: new Map(), objects: new Map() }, put };
}

describe('the fleet bench: convergence seen from its own informers', () => {
  it('counts a member converged only on the round it follows, and says when all are', async () => {
    const { server, put } = fakeServer();
    const watch = new ConvergenceWatch([server]);
    put('m-0', 'w-0', { round: 1, generation: 2, observed: 2 });
    put('m-0', 'w-1', { round: 1, generation: 2, observed: 2 });
    // Round 2 is written, and followed before the informer has seen the writes.
    const tracker = watch.follow(0, 'm-0', 2, 2);
    assert.equal(tracker.converged, 0, 'converged on round 1 is not converged on round 2');
    put('m-0', 'w-0', { round: 2, generation: 3, observed: 2 });
    put('m-0', 'w-1', { round: 2, generation: 3, observed: 2 });
    assert.equal(tracker.converged, 0);

    put('m-0', 'w-0', { round: 2, generation: 3, observed: 3 });
    assert.equal(tracker.converged, 1);
    assert.ok(tracker.firstAt !== undefined && tracker.doneAt === undefined);
    put('m-0', 'w-0', { round: 2, generation: 3, observed: 3 }); // the same state again: counted once
    assert.equal(tracker.converged, 1);
    const done = watch.whenDone(tracker, 1_000, 'member m-0');
    put('m-0', 'w-1', { round: 2, generation: 3, observed: 3 });
    assert.equal(await done, tracker.doneAt);
    assert.equal(tracker.converged, 2);
  });

  it("times one Widget's convergence by the event that shows it, not the state before its write", async () => {
    const { server, put } = fakeServer();
    const watch = new ConvergenceWatch([server]);
    put('lone', 'w-0', { round: 4, generation: 5, observed: 5 });
    const converged = watch.whenObjectConverged(0, 'lone', 'w-0', 7, 1_000);
    let at;
    void converged.then((t) => (at = t));
    put('lone', 'w-0', { round: 7, generation: 6, observed: 5 }); // written, not reconciled yet
    await Promise.resolve();
    assert.equal(at, undefined);
    const before = performance.now();
    put('lone', 'w-0', { round: 7, generation: 6, observed: 6 });
    assert.ok((await converged) >= before);
  });

  it('names how far a member got when it does not converge in time', async () => {
    const { server, put } = fakeServer();
    const watch = new ConvergenceWatch([server]);
    put('m-1', 'w-0', { round: 1, generation: 1 });
    const tracker = watch.follow(0, 'm-1', 1, 3);
    await assert.rejects(watch.whenDone(tracker, 10, 'member m-1'), /member m-1: 0 of 3 Widgets converged in 10 ms/);
  });
});
