import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@nestor/core';
import { WritePacer } from './write-pacer.js';

/** A pacer on a manual clock that records the waits it asks for instead of sleeping. */
function pacer(perSecond: number) {
  const clock = new ManualClock(1_000);
  const waits: number[] = [];
  const wait = (ms: number) => {
    waits.push(Math.round(ms));
    return Promise.resolve();
  };
  return { pacer: new WritePacer(perSecond, clock, wait), clock, waits };
}

describe('WritePacer', () => {
  it('lets a second’s worth through at once, then spaces writes at the rate', async () => {
    const { pacer: p, waits } = pacer(10);
    for (let i = 0; i < 13; i++) await p.take();
    assert.deepEqual(waits, [100, 200, 300]);
  });

  it('refills as time passes, never above one second’s worth', async () => {
    const { pacer: p, clock, waits } = pacer(10);
    for (let i = 0; i < 10; i++) await p.take();
    clock.advance(60_000);
    for (let i = 0; i < 11; i++) await p.take();
    assert.deepEqual(waits, [100]);
  });

  it('takes a refunded token back: a no-op rewrite costs nothing of the rate', async () => {
    const { pacer: p, waits } = pacer(10);
    for (let i = 0; i < 100; i++) {
      await p.take();
      p.refund();
    }
    assert.deepEqual(waits, []);
  });

  it('never waits at an infinite rate, and refuses a rate that is not above 0', async () => {
    const { pacer: p, waits } = pacer(Infinity);
    for (let i = 0; i < 1000; i++) await p.take();
    assert.deepEqual(waits, []);
    assert.throws(() => new WritePacer(0), /above 0/);
    assert.throws(() => new WritePacer(Number.NaN), /above 0/);
  });
});
