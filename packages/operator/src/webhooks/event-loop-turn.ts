// Work on untrusted input is done in steps, with a turn of the event loop between them when
// it has held the loop for a slice, so a deadline's timer fires and other requests are
// served while one large request converts.
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';

/** How long work may hold the event loop between turns, at most (plus the step that runs past it). */
export const EVENT_LOOP_SLICE_MS = 1;

/**
 * When this process last gave the loop a turn here. One for all requests: the loop is one,
 * and a request that starts later than this only makes the next turn come sooner.
 */
let turnedAt = performance.now();

/**
 * A step boundary: lets the event loop run its timers, I/O and other requests once when the
 * slice is used up, then throws the signal's reason if it was aborted (a deadline passed),
 * so the work stops at its next step.
 */
export async function turn(signal?: AbortSignal): Promise<void> {
  if (performance.now() - turnedAt >= EVENT_LOOP_SLICE_MS) {
    await setImmediate();
    turnedAt = performance.now();
  }
  signal?.throwIfAborted();
}
