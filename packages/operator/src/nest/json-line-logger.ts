import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * operatorLogger()'s JSON output: one line per call, whatever Nest version runs it, with the
 * fields of Nest 12's ConsoleLogger in JSON mode (level, pid, timestamp, message, context)
 * and the call's plain-object arguments (the runtime's controller, namespace, name,
 * reconcileID) as top-level keys. Nest 12 does that with `flattenParams`; Nest 11's
 * ConsoleLogger has no such option and writes each argument as a line of its own, the fields
 * nested under `message`, so a collector could not filter by them. Written here through the
 * public level methods only, so no version's internals are relied on.
 */
export class JsonLineLogger extends ConsoleLogger {
  // Kept here, not read from ConsoleLogger's protected field: what setContext() was given.
  private ownContext: string | undefined;

  override setContext(context: string): void {
    this.ownContext = context;
    super.setContext(context);
  }

  override log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }
  override error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  override warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  override debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  override verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }
  override fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: LogLevel, message: unknown, params: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    const line = jsonLine(level, message, params, this.ownContext);
    (level === 'error' || level === 'fatal' ? process.stderr : process.stdout).write(`${line}\n`);
  }
}

/**
 * The record of one call, as Nest's Logger makes them: `(message, ...params, context)`, the
 * context a trailing string; for error and fatal a string that is a stack trace is `stack`.
 */
export function jsonLine(
  level: LogLevel,
  message: unknown,
  params: readonly unknown[],
  defaultContext?: string,
): string {
  const rest = [...params];
  const failure = level === 'error' || level === 'fatal';
  const isStack = (value: unknown) => failure && typeof value === 'string' && STACK.test(value);
  const last = rest.at(-1);
  const context = typeof last === 'string' && !isStack(last) ? (rest.pop() as string) : defaultContext;
  const record: Record<string, unknown> = { level, pid: process.pid, timestamp: Date.now() };
  let error = message instanceof Error ? message : undefined;
  record['message'] = error ? error.message : message;
  if (context) record['context'] = context;
  const fields: Record<string, unknown> = {};
  const details: unknown[] = [];
  for (const param of rest) {
    if (isStack(param)) {
      record['stack'] = param;
    } else if (param instanceof Error && !error) {
      error = param;
    } else if (isPlainObject(param)) {
      Object.assign(fields, param);
    } else if (param !== undefined) {
      details.push(param);
    }
  }
  if (error) record['error'] = { name: error.name, message: error.message, stack: error.stack };
  if (details.length > 0) record['details'] = details;
  // The record's own keys win: a field named "message" or "level" must not replace them.
  for (const [key, value] of Object.entries(fields)) if (!(key in record)) record[key] = value;
  return stringify(record);
}

/** A stack trace's frame line (Nest's test is the same). */
const STACK = /\n[ \t]+at .+:\d+:\d+/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** JSON, whatever a field holds: a bigint as its digits, an object met again (a cycle) as "[Circular]". */
function stringify(record: Record<string, unknown>): string {
  try {
    return JSON.stringify(record);
  } catch {
    // A bigint or a cycle: the rare case pays for the replacer.
  }
  const seen = new WeakSet<object>();
  return JSON.stringify(record, (_key, value: unknown) => {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    return value;
  });
}
