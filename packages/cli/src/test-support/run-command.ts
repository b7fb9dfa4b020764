// Runs a command as a user would in a terminal, for the CLI's end-to-end tests: its output
// collected, killed if it outlives its bound.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';

export interface CommandResult {
  code: number | null;
  /** Standard output and error, interleaved as a terminal shows them. */
  output: string;
  stdout: string;
  stderr: string;
}

export function runCommand(
  command: string,
  args: string[],
  cwd: string,
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, CI: 'true', NO_COLOR: '1', ...options.env },
    });
    let output = '';
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      stderr += chunk;
    });
    const timeoutMs = options.timeoutMs ?? 240_000;
    const bound = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolve({ code, output, stdout, stderr });
    });
  });
}

/** Fails with the command's output when it did not exit 0. */
export function assertSucceeded(result: CommandResult, what: string): void {
  assert.equal(result.code, 0, `${what} failed:\n${result.output}`);
}
