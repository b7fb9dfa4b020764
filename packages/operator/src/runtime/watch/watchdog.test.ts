import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_WATCH_STALL_MS, ManualClock } from '@nestor/core';
import { stallLimitMs, Watchdog } from './watchdog.js';

describe('Watchdog', () => {
  it('fires after the limit of silence, counted from the last touch', () => {
    const clock = new ManualClock();
    let stalls = 0;
    const watchdog = new Watchdog(clock, 1000, () => stalls++);
    clock.advance(600);
    watchdog.touch();
    clock.advance(999);
    assert.equal(stalls, 0);
    clock.advance(1);
    assert.equal(stalls, 1);
  });

  it('holds one timer, and none once stopped', () => {
    const clock = new ManualClock();
    const watchdog = new Watchdog(clock, 1000, () => assert.fail('stalled'));
    for (let i = 0; i < 10; i++) {
      clock.advance(100);
      watchdog.touch();
    }
    assert.equal(clock.pendingTimers, 1);
    watchdog.stop();
    assert.equal(clock.pendingTimers, 0);
    clock.advance(10_000);
  });

  it("allows a watch's timeout and a margin, at most the default, unless told", () => {
    assert.equal(stallLimitMs(25), 35_000);
    assert.equal(stallLimitMs(600), DEFAULT_WATCH_STALL_MS);
    assert.equal(stallLimitMs(600, 5000), 5000);
  });
});
