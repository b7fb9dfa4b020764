// The probe app (nest-probe/) as a child process: its events read in order, waited for with
// bounds, its output kept for the failure message.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { waitFor } from '@nestor/testing';
import type { ProbeEvent } from './nest-probe/probe-events.js';

const EXITED = Symbol('exited');

export class ProbeProcess {
  /** Every event so far, in the order the probe wrote them. */
  readonly events: ProbeEvent[] = [];
  private readonly child: ChildProcess;
  private readonly stderr: string[] = [];
  private exitCode: number | null | undefined;

  constructor(script: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, ['--enable-source-maps', script], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as ProbeEvent);
      } catch {
        this.events.push({ kind: 'log', level: 'stdout', text: line });
      }
    });
    this.child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString()));
    this.child.on('exit', (code) => (this.exitCode = code));
  }

  /** The first event from index `from` on that `matches`; fails if the probe exits first or after `timeoutMs`. */
  async next<E extends ProbeEvent>(
    what: string,
    matches: (event: ProbeEvent) => event is E,
    from = 0,
    timeoutMs = 60_000,
  ): Promise<E> {
    const found = await waitFor(
      () => this.events.slice(from).find(matches) ?? (this.exitCode !== undefined ? EXITED : undefined),
      { what, timeoutMs },
    );
    if (found === EXITED) throw new Error(`the probe exited (${this.exitCode}) before ${what}\n${this.output()}`);
    return found;
  }

  /** Writes a command line to the probe's stdin. */
  send(command: 'health' | 'logger' | 'close'): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /** Its exit code, once it exits (bounded). */
  async exited(timeoutMs = 30_000): Promise<number | null> {
    if (this.exitCode === undefined) await once(this.child, 'exit', { signal: AbortSignal.timeout(timeoutMs) });
    return this.exitCode ?? null;
  }

  kill(): void {
    if (this.exitCode === undefined) this.child.kill('SIGKILL');
  }

  /** The events and stderr so far, for a failure message. */
  output(): string {
    return [...this.events.map((event) => JSON.stringify(event)), ...this.stderr].join('\n');
  }
}
