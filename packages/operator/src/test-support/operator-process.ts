// Runs lease-operator.js as a child process and collects its JSON lines, for the
// production end-to-end tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@nestor/testing';
import type { OperatorEvent } from './lease-operator.js';

const SCRIPT = fileURLToPath(new URL('./lease-operator.js', import.meta.url));
/** The Node the repository pins (node_modules/.bin/node), else the one running the tests. */
const PINNED_NODE = fileURLToPath(new URL('../../../../node_modules/.bin/node', import.meta.url));
const NODE = existsSync(PINNED_NODE) ? PINNED_NODE : process.execPath;

export interface OperatorProcessOptions {
  kubeconfigPath: string;
  namespace: string;
  identity: string;
  leaseId: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  cacheSyncTimeoutMs?: number;
  workers?: number;
  /** Sharded: the identity is the shard id, the Lease id the ring. */
  sharding?: boolean;
  /**
   * Another operator speaking the same protocol, configured by the same variables (the
   * chaos suite's controller-runtime peer): its executable, and variables of its own.
   */
  executable?: { file: string; env?: Record<string, string> };
  /** More variables for the process (NODE_OPTIONS, as the generated Deployment sets it). */
  env?: Record<string, string>;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the exit was seen. */
  at: number;
}

export class OperatorProcess {
  readonly identity: string;
  readonly events: OperatorEvent[] = [];
  /** Everything else it printed, for failure messages. */
  readonly output: string[] = [];
  /** Date.now() when each line of `output` arrived (its log's timeline, to the millisecond). */
  readonly outputAt: number[] = [];
  /** Date.now() when the process was spawned. */
  readonly spawnedAt = Date.now();
  readonly exited: Promise<ProcessExit>;
  private exit?: ProcessExit;
  private readonly child: ChildProcess;

  constructor(options: OperatorProcessOptions) {
    this.identity = options.identity;
    const timings: Record<string, string> = {};
    if (options.leaseDurationMs) timings['NESTOR_LEASE_MS'] = String(options.leaseDurationMs);
    if (options.renewDeadlineMs) timings['NESTOR_RENEW_MS'] = String(options.renewDeadlineMs);
    if (options.retryPeriodMs) timings['NESTOR_RETRY_MS'] = String(options.retryPeriodMs);
    if (options.cacheSyncTimeoutMs) timings['NESTOR_SYNC_MS'] = String(options.cacheSyncTimeoutMs);
    if (options.workers) timings['NESTOR_WORKERS'] = String(options.workers);
    if (options.sharding) timings['NESTOR_SHARDING'] = '1';
    const [file, args] = options.executable ? [options.executable.file, []] : [NODE, ['--enable-source-maps', SCRIPT]];
    this.child = spawn(file, args, {
      env: {
        ...process.env,
        ...options.env,
        ...options.executable?.env,
        KUBECONFIG: options.kubeconfigPath,
        NESTOR_NAMESPACE: options.namespace,
        NESTOR_IDENTITY: options.identity,
        NESTOR_LEASE_ID: options.leaseId,
        NO_COLOR: '1',
        ...timings,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal, at: Date.now() };
        resolve(this.exit);
      });
    });
    this.read(this.child.stdout!, true);
    this.read(this.child.stderr!, false);
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Events of one kind, optionally for one key. */
  of(event: OperatorEvent['event'], key?: string): OperatorEvent[] {
    return this.events.filter((e) => e.event === event && (key === undefined || e.key === key));
  }

  /** Waits for an event; fails early, with the output, if the process exits first. */
  async waitForEvent(
    what: string,
    match: (event: OperatorEvent) => boolean,
    timeoutMs = 30_000,
  ): Promise<OperatorEvent> {
    return waitFor(
      () => {
        const found = this.events.find(match);
        if (found) return found;
        if (!this.running)
          throw new Error(`${this.identity} exited first (${JSON.stringify(this.exit)}):\n${this.tail()}`);
        return undefined;
      },
      { timeoutMs, what: `${this.identity}: ${what}` },
    );
  }

  /** Waits for the exit, bounded; fails with the output if it does not come. */
  async waitForExit(timeoutMs = 30_000): Promise<ProcessExit> {
    await waitFor(() => !this.running, { timeoutMs, what: `${this.identity} to exit` }).catch((error: Error) => {
      throw new Error(`${error.message}:\n${this.tail()}`);
    });
    return this.exited;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /**
   * SIGSTOPs it and returns once the kernel reports it stopped, with the time: a reconcile the
   * process recorded as started before that time was caught by the freeze. (kill() returns
   * before the process stops; a time read before it can precede the last work it did.)
   */
  async freeze(): Promise<number> {
    this.signal('SIGSTOP');
    await waitFor(async () => (await processState(this.child.pid!)) === 'T', {
      timeoutMs: 5_000,
      intervalMs: 5,
      what: `${this.identity} to stop`,
    });
    return Date.now();
  }

  /** SIGKILLs it if still running and waits for the exit (for after/finally). */
  async dispose(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }

  tail(lines = 60): string {
    return this.output.slice(-lines).join('\n');
  }

  private read(stream: NodeJS.ReadableStream, parse: boolean): void {
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const event = parse ? parseEvent(line) : undefined;
        if (event) this.events.push(event);
        else {
          this.output.push(line);
          this.outputAt.push(Date.now());
        }
      }
    });
  }
}

function parseEvent(line: string): OperatorEvent | undefined {
  if (!line.startsWith('{"nestorTest":true')) return undefined;
  try {
    return JSON.parse(line) as OperatorEvent;
  } catch {
    return undefined;
  }
}

/** The one-letter state of a Linux process (/proc/<pid>/stat's third field): 'T' when stopped. */
async function processState(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name (field 2) is in parentheses and may hold spaces: read after the last ')'.
  return stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}
