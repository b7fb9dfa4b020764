import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';

export interface ProcessOptions {
  /** Copy the process's output to this process's stderr, prefixed with its name. */
  attachOutput: boolean;
  /** How long stop() waits after SIGTERM before it sends SIGKILL. */
  stopTimeoutMs: number;
}

// setpriv (util-linux) makes the kernel kill the child when this process dies, even by
// SIGKILL, so a killed test run leaves no etcd or kube-apiserver behind.
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/** One control-plane process: started, watched for an early exit, stopped with a bound. */
export class ControlPlaneProcess {
  private readonly child: ChildProcess;
  private readonly output: string[] = [];
  /** Settles when the process has exited, with its exit code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private hasExited = false;

  constructor(
    readonly name: string,
    binary: string,
    args: string[],
    private readonly options: ProcessOptions,
    /** Its environment (default: this process's). */
    env?: NodeJS.ProcessEnv,
  ) {
    const [command, argv] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', binary, ...args]] : [binary, args];
    this.child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env } : {}) });
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      for (const line of text.split('\n')) {
        if (!line) continue;
        this.output.push(line);
        if (this.output.length > 60) this.output.shift();
        if (options.attachOutput) process.stderr.write(`[${name}] ${line}\n`);
      }
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.output.push(`failed to start ${basename(binary)}: ${error.message}`);
        this.hasExited = true;
        resolve({ code: -1, signal: null });
      });
      this.child.once('exit', (code, signal) => {
        this.hasExited = true;
        resolve({ code, signal });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.hasExited;
  }

  /** The last lines the process printed, for error messages. */
  outputTail(lines = 25): string {
    return this.output.slice(-lines).join('\n');
  }

  /** SIGTERM, then SIGKILL when it has not exited within the stop timeout. */
  async stop(): Promise<void> {
    if (this.hasExited) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), this.options.stopTimeoutMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the process at once (for fault injection). */
  async kill(): Promise<void> {
    if (this.hasExited) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
