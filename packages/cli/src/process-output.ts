/**
 * The `nestor` process's output: what a command prints as its result goes to stdout, and
 * nothing else does. The imported application runs in this process, and whatever it
 * writes to stdout (console.log, Nest's Logger, at import or later from a timer) goes to
 * stderr instead, so that `nestor manifests | kubectl apply -f -` gets YAML alone.
 */
export function commandOutput(): {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Resolves once everything written has been handed to the operating system. */
  flushed: () => Promise<void>;
} {
  const stdout = process.stdout.write.bind(process.stdout) as (text: string, done?: () => void) => boolean;
  const stderr = process.stderr.write.bind(process.stderr) as (text: string, done?: () => void) => boolean;
  // console and Nest's ConsoleLogger call the write method of the process.stdout object.
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return {
    stdout: (text) => void stdout(text),
    stderr: (text) => void stderr(text),
    // A stream calls back in the order it was written to: an empty write's callback comes last.
    flushed: () =>
      Promise.all([new Promise<void>((done) => stdout('', done)), new Promise<void>((done) => stderr('', done))]).then(
        () => undefined,
      ),
  };
}
