// The loop that keeps a served certificate current, for files a server re-reads and for the
// webhook certificate an operator keeps in a Secret: each check says when the next one is,
// a failure keeps the certificate served and is warned of once per problem, not per check.
import type { Clock, TimerHandle } from './clock.js';
import type { RuntimeLogger } from './logger.js';

export interface CertificateRefreshOptions {
  clock: Clock;
  logger: RuntimeLogger;
  /** Until the first check. */
  firstMs: number;
  /** Checks the certificate and hands on a new one; returns how long until the next check. */
  check: () => number | Promise<number>;
  /** A check failed: how long until the next. */
  failed: (problem: string) => number;
  /** What is logged of a problem (once, until another problem or a check that succeeds). */
  warning: (problem: string) => string;
}

/** Checks on the clock until stop(). A check that returns at once is followed at once, in its turn. */
export function refreshCertificate(options: CertificateRefreshOptions): { stop(): void } {
  const { clock, logger } = options;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let lastProblem = '';
  const schedule = (ms: number) => {
    if (!stopped) timer = clock.setTimeout(tick, ms);
  };
  const succeeded = (nextMs: number) => {
    lastProblem = '';
    schedule(nextMs);
  };
  const failed = (error: unknown) => {
    const problem = (error as Error).message;
    if (problem !== lastProblem) logger.warn(options.warning(problem));
    lastProblem = problem;
    schedule(options.failed(problem));
  };
  const tick = () => {
    let next: number | Promise<number>;
    try {
      next = options.check();
    } catch (error) {
      failed(error);
      return;
    }
    if (typeof next === 'number') succeeded(next);
    else next.then(succeeded, failed);
  };
  schedule(options.firstMs);
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
