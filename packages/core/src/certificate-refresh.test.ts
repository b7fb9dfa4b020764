import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refreshCertificate } from './certificate-refresh.js';
import type { RuntimeLogger } from './logger.js';
import { ManualClock } from './testing-clock.js';

function recordingLogger(warnings: string[]): RuntimeLogger {
  const ignore = () => undefined;
  return { error: ignore, warn: (message: string) => warnings.push(message), info: ignore, debug: ignore };
}

describe('refreshCertificate', () => {
  it('checks when each check says, warns of a problem once until it changes or a check succeeds, and stops', () => {
    const clock = new ManualClock();
    const warnings: string[] = [];
    const outcomes: (number | string)[] = [50, 'unreadable', 'unreadable', 'half written', 'unreadable', 70];
    const checks: number[] = [];
    const refresh = refreshCertificate({
      clock,
      logger: recordingLogger(warnings),
      firstMs: 10,
      check: () => {
        checks.push(clock.now());
        const outcome = outcomes.shift()!;
        if (typeof outcome === 'string') throw new Error(outcome);
        return outcome;
      },
      failed: () => 5,
      warning: (problem) => `keeping it: ${problem}`,
    });
    for (let i = 0; i < 20; i++) clock.advance(5);
    assert.deepEqual(checks, [10, 60, 65, 70, 75, 80]);
    assert.deepEqual(warnings, ['keeping it: unreadable', 'keeping it: half written', 'keeping it: unreadable']);
    refresh.stop();
    clock.advance(1000);
    assert.equal(checks.length, 6);
  });
});
