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
  const stdout = closable(process.stdout);
  const stderr = closable(process.stderr);
  // console and Nest's ConsoleLogger call the write method of the process.stdout object.
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return {
    stdout: (text) => stdout.write(text),
    stderr: (text) => stderr.write(text),
    flushed: () => Promise.all([stdout.flushed(), stderr.flushed()]).then(() => undefined),
  };
}

/**
 * A stream the reader may close (`nestor ... | head`): EPIPE ends its output quietly, as
 * a Unix tool's does, instead of an unhandled 'error' and its stack; what follows is dropped.
 */
function closable(stream: NodeJS.WriteStream): { write: (text: string) => void; flushed: () => Promise<void> } {
  const write = stream.write.bind(stream) as (text: string, done?: (error?: Error | null) => void) => boolean;
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    closed = true;
    if (error.code !== 'EPIPE' && stream !== process.stderr) {
      process.stderr.write(`nestor: cannot write the output: ${error.message}\n`);
      process.exitCode = 1;
    }
  });
  return {
    write: (text) => {
      if (!closed) write(text);
    },
    // A stream calls back in the order it was written to: an empty write's callback comes last.
    flushed: () => (closed ? Promise.resolve() : new Promise<void>((done) => write('', () => done()))),
  };
}
