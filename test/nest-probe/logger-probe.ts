// What operatorLogger() writes for each call, on the Nest version the probe runs: the
// runtime's call shapes through Nest's Logger (an instance with a context, fields as a
// trailing object; an error with its stack; the static Logger), each call's output captured.
import { Logger, type LoggerService } from '@nestjs/common';
import { operatorLogger } from '@nestor/operator';

/** The lines each call wrote (stdout and stderr), in call order; the app's logger restored after. */
export function operatorLoggerCalls(appLogger: LoggerService): string[][] {
  Logger.overrideLogger(operatorLogger({ format: 'json', level: 'debug' }));
  try {
    const reconciler = new Logger('ProbeReconciler');
    return [
      () => reconciler.log('reconciled', { controller: 'echo', namespace: 'ns', name: 'a', reconcileID: 'r-1' }),
      () => reconciler.error('reconcile failed', new Error('boom').stack),
      () => reconciler.warn('slow', { durationMs: 12 }),
      () => Logger.debug('static', { reconcileID: 'r-2' }, 'ProbeStatic'),
    ].map(captured);
  } finally {
    Logger.overrideLogger(appLogger);
  }
}

function captured(call: () => void): string[] {
  const written: string[] = [];
  const [out, err] = [process.stdout.write, process.stderr.write];
  const capture = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stdout.write;
  process.stdout.write = capture;
  process.stderr.write = capture;
  try {
    call();
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  return written.join('').split('\n').filter(Boolean);
}
