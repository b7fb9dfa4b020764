import { SetMetadata } from '@nestjs/common';
import { OPERATOR_TIMER_METADATA } from '../operator.constants.js';

/** What `@Timer` takes: the interval, and whether it runs on every replica or on the leader only. */
export interface TimerOptions {
  /** From the end of one run to the start of the next, in milliseconds. */
  intervalMs: number;
  /** From the object's appearance (or the operator's start) to the first run (default: intervalMs). */
  initialDelayMs?: number;
}

/**
 * Marks a method of a `@Controller` class to run periodically on each object of its kind,
 * as kopf's `@timer`: `(object, context) => Promise<void>`. It starts when the object is in
 * the cache, stops when the object is deleted or its deletion starts, and never runs at the
 * same time as the object's reconcile. A throw is logged and the timer runs again after
 * its interval. `@Timer(60_000)` or `@Timer({ intervalMs: 60_000, initialDelayMs: 5_000 })`.
 */
export function Timer(intervalOrOptions: number | TimerOptions): MethodDecorator {
  const options: TimerOptions =
    typeof intervalOrOptions === 'number' ? { intervalMs: intervalOrOptions } : { ...intervalOrOptions };
  return SetMetadata(OPERATOR_TIMER_METADATA, options);
}
