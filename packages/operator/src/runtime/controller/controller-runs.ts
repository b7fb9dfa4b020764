import { randomUUID } from 'node:crypto';
import { DEFAULT_CLUSTER_NAME, refOf, type RuntimeLogger } from '@nestor/core';
import type { KubeClient } from '../../client/kube-client.js';
import { runInContext, type RunContext } from '../../client/run-context.js';
import type { ReconcileRequest } from './reconciler.js';

// The one run wrapper of a controller, for its reconciles and its timers alike: each run gets
// its ID, its signal, a logger bound to it and the client scoped to it, and runs inside its
// RunContext, the ambient store the injected client reads. Runs are tracked until they
// settle, so shutdown can abort them and wait for them.

export interface ControllerRunsOptions {
  /** The controller whose runs these are. */
  controller: string;
  /** The controller's client: each run gets it scoped to the controller and the run's signal. */
  client: KubeClient;
  /** The cluster the client reads and writes (default 'default'): in each request, and in log lines when not the default. */
  cluster?: string;
  log: RuntimeLogger;
}

/** One started run. */
export interface Run<T, R> {
  /** What the run's code got. */
  readonly request: ReconcileRequest<T>;
  /** Aborts the run's signal (its timeout). */
  readonly abort: AbortController;
  /** What the run's code returned or threw. */
  readonly result: Promise<R>;
  /** Its worker is free: no longer in flight, though code that ignores its signal may run on until `result` settles. */
  end(): void;
}

/** The runs of one controller: started inside their RunContext, tracked until they settle. */
export class ControllerRuns {
  private readonly running = new Set<AbortController>();
  private readonly unsettled = new Set<Promise<unknown>>();

  constructor(private readonly options: ControllerRunsOptions) {}

  /** Runs in flight now (started, not ended). */
  get inFlight(): number {
    return this.running.size;
  }

  /** Runs not settled yet, those ended while their code ignored its signal included. */
  get unsettledRuns(): number {
    return this.unsettled.size;
  }

  /**
   * Starts `body` for `key`'s object as one run. `fields` are added to its log lines (a
   * timer's name). Never throws: what `body` throws rejects `result`.
   */
  start<T, R>(
    key: string,
    object: T | undefined,
    attempt: number,
    body: (request: ReconcileRequest<T>) => Promise<R> | R,
    fields: Record<string, unknown> = {},
  ): Run<T, R> {
    const { controller, cluster = DEFAULT_CLUSTER_NAME } = this.options;
    const abort = new AbortController();
    const signal = abort.signal;
    const ref = refOf(key);
    const reconcileId = randomUUID();
    const log = bindLogger(this.options.log, {
      controller,
      ...(cluster === DEFAULT_CLUSTER_NAME ? {} : { cluster }),
      ...fields,
      namespace: ref.namespace,
      name: ref.name,
      reconcileId,
    });
    // Explicit in the request's client, ambient in the context: the injected client is fenced and cut alike.
    const client = this.options.client.scoped({ controller, signal });
    const request: ReconcileRequest<T> = { ref, key, object, signal, attempt, reconcileId, log, client, cluster };
    const context: RunContext = { controller, key, attempt, signal, reconcileId };
    const result = runInContext(context, async () => body(request));
    this.running.add(abort);
    this.unsettled.add(result);
    const settle = () => this.unsettled.delete(result);
    result.then(settle, settle);
    return { request, abort, result, end: () => this.running.delete(abort) };
  }

  /** Aborts every run in flight. */
  abortAll(reason: Error): void {
    for (const abort of this.running) abort.abort(reason);
  }

  /** Resolves once every run started so far has settled (returned or thrown). */
  async settled(): Promise<void> {
    while (this.unsettled.size > 0) await Promise.allSettled([...this.unsettled]);
  }
}

function bindLogger(log: RuntimeLogger, bound: Record<string, unknown>): RuntimeLogger {
  const fields = Object.fromEntries(Object.entries(bound).filter(([, v]) => v !== undefined));
  return {
    debug: (message, extra) => log.debug(message, { ...fields, ...extra }),
    info: (message, extra) => log.info(message, { ...fields, ...extra }),
    warn: (message, extra) => log.warn(message, { ...fields, ...extra }),
    error: (message, extra) => log.error(message, { ...fields, ...extra }),
  };
}
