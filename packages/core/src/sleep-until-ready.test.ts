import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Connectivity } from './connectivity.js';
import { sleepUntilReady } from './sleep-until-ready.js';
import { ManualClock } from './testing-clock.js';

describe('sleepUntilReady', () => {
  it('waits the whole delay where nothing reports readiness', async () => {
    const clock = new ManualClock();
    const slept = sleepUntilReady(1000, { clock });
    clock.advance(999);
    assert.equal(clock.pendingTimers, 1);
    clock.advance(1);
    assert.equal(await slept, 'slept');
  });

  it('ends early when the outage gate finds the server ready, and clears its timer', async () => {
    const clock = new ManualClock();
    const connectivity = new Connectivity();
    const slept = sleepUntilReady(60_000, { clock, connectivity });
    connectivity.ready();
    assert.equal(await slept, 'ready');
    assert.equal(clock.pendingTimers, 0);
  });

  it('ends when its signal aborts, at once when it already has', async () => {
    const clock = new ManualClock();
    const abort = new AbortController();
    const slept = sleepUntilReady(60_000, { clock, signal: abort.signal, connectivity: new Connectivity() });
    abort.abort();
    assert.equal(await slept, 'slept');
    assert.equal(clock.pendingTimers, 0);
    assert.equal(await sleepUntilReady(60_000, { clock, signal: abort.signal }), 'slept');
    assert.equal(clock.pendingTimers, 0);
  });
});
