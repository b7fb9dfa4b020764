// What every command of the cli shares: where it writes, and the error of a wrong call.

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
