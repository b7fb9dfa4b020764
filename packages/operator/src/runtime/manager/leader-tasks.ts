import { type RuntimeLogger, silentLogger } from '@nestor/core';

/** What a leader task is given for one term of leadership. */
export interface Leading {
  /** Aborted when this replica stops leading or the manager stops: return soon after. */
  readonly signal: AbortSignal;
  /** Throws unless this replica may write as the leader now (the leader Lease's fence); a no-op without leader election. */
  assertLeading(): void;
}

/**
 * Work that runs on the leader only, beside its controllers (controller-runtime's
 * `LeaderElectionRunnable`): started each time this replica takes the lead, its signal
 * aborted when it loses it. It should run until then; one that returns or throws early is
 * not started again before the next term.
 */
export interface LeaderTask {
  /** For logs. */
  readonly name: string;
  run(leading: Leading): Promise<void>;
}

/**
 * The manager's leader tasks: each started once per term of leadership, all aborted and
 * waited for when the term ends (before the controllers stand by, or before the Leases are
 * released on stop).
 * @internal
 */
export class LeaderTasks {
  private readonly tasks: LeaderTask[] = [];
  private term?: { abort: AbortController; running: Promise<void>[]; assertLeading: () => void };

  constructor(private readonly log: RuntimeLogger = silentLogger) {}

  /** Adds a task; while a term runs it starts at once. */
  add(task: LeaderTask): void {
    this.tasks.push(task);
    if (this.term) this.term.running.push(this.start(task, this.term.abort.signal, this.term.assertLeading));
  }

  /** Starts every task for a new term (nothing when one runs already). */
  lead(assertLeading: () => void): void {
    if (this.term) return;
    const abort = new AbortController();
    this.term = { abort, assertLeading, running: [] };
    for (const task of this.tasks) this.term.running.push(this.start(task, abort.signal, assertLeading));
  }

  /** Ends the term: aborts every task and waits until each returned. */
  async standBy(): Promise<void> {
    const term = this.term;
    this.term = undefined;
    if (!term) return;
    term.abort.abort(new Error('this replica stopped leading'));
    await Promise.all(term.running);
  }

  private start(task: LeaderTask, signal: AbortSignal, assertLeading: () => void): Promise<void> {
    return task.run({ signal, assertLeading }).then(
      () => {
        if (!signal.aborted) this.log.debug(`leader task ${task.name} returned before the end of the term`);
      },
      (error: unknown) => {
        if (!signal.aborted) this.log.error(`leader task ${task.name} failed: ${(error as Error).message}`);
      },
    );
  }
}
