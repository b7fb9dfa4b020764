import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff } from './backoff.js';
import { ManualClock } from '@nestor/core';

describe('Backoff', () => {
  it('doubles from 800 ms to a 30 s cap, with up to 100% jitter on top', () => {
    const clock = new ManualClock();
    const none = new Backoff({ clock, random: () => 0 });
    const delays = Array.from({ length: 8 }, () => none.next());
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    const full = new Backoff({ clock, random: () => 0.999 });
    assert.equal(full.next(), Math.round(800 * 1.999));
  });

  it('starts over after a quiet period longer than resetAfterMs', () => {
    const clock = new ManualClock();
    const backoff = new Backoff({ clock, random: () => 0, resetAfterMs: 120_000 });
    backoff.next();
    clock.advance(1000);
    assert.equal(backoff.next(), 1600);
    // Counted from the end of the wait: 1.6 s of waiting is not quiet time.
    clock.advance(120_001);
    assert.equal(backoff.next(), 3200);
    clock.advance(3200 + 120_001);
    assert.equal(backoff.next(), 800);
    backoff.next();
    backoff.reset();
    assert.equal(backoff.next(), 800);
  });
});
