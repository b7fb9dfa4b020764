// The scaffolded app's `dist/main.js` run as its container runs it, configured by its
// environment, its stdout a pipe (as a pod's log is): for the scaffolding e2e tests, which
// check that init's main.ts starts the operator with JSON logs and stops on SIGTERM.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '@nestor/testing';

export interface OperatorRun {
  /** The JSON line of the first controller's start (`controller <name> started`). */
  started: Record<string, unknown>;
  /** Every stdout line, in order. */
  lines: string[];
  /** How it ended after SIGTERM: Nest's shutdown hooks re-raise the signal once closed. */
  ended: string;
  /** stdout and stderr, for a failure message. */
  output: string;
}

/** Starts it, waits for a controller to start, sends SIGTERM, and waits for it to exit (all bounded). */
export async function runOperatorMain(app: string, env: Record<string, string>): Promise<OperatorRun> {
  const child = spawn(process.execPath, [join('dist', 'main.js')], {
    cwd: app,
    env: {
      ...process.env,
      METRICS_BIND_ADDRESS: '0',
      HEALTH_PROBE_BIND_ADDRESS: '0',
      WEBHOOK_PORT: '0',
      LOG_FORMAT: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exit: string | undefined;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.on('exit', (code, signal) => (exit = signal ?? `exit ${code}`));
  const lines = () => stdout.split('\n').filter(Boolean);
  const output = () => `${stdout}${stderr}`;
  try {
    const started = await waitFor(
      () => {
        if (exit !== undefined) return { exited: true } as const;
        for (const line of lines()) {
          const parsed = parse(line);
          if (typeof parsed?.['message'] === 'string' && /^controller \S+ started$/.test(parsed['message']))
            return parsed;
        }
        return undefined;
      },
      { timeoutMs: 60_000, what: 'a controller of dist/main.js to start' },
    );
    if ('exited' in started) throw new Error(`dist/main.js ended (${exit}) before a controller started:\n${output()}`);
    child.kill('SIGTERM');
    await waitFor(() => exit !== undefined, { timeoutMs: 30_000, what: 'dist/main.js to exit after SIGTERM' });
    return { started, lines: lines(), ended: exit!, output: output() };
  } finally {
    if (exit === undefined) child.kill('SIGKILL');
  }
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
