// What the probe app reports to test/nest-versions.e2e.test.ts: one JSON object a line on
// stdout. The test reads them in order; the log lines are Nest's own, as its logger got them.
import type { LoggerService } from '@nestjs/common';

export type ProbeEvent =
  /** The versions of the peer dependencies, as @nestor/operator resolves them. */
  | { kind: 'versions'; versions: Record<string, string> }
  | { kind: 'started'; webhookPort: number; webhookPaths: string[] }
  | { kind: 'reconciled'; name: string }
  | { kind: 'health'; ready: string; live: string }
  /** What operatorLogger() wrote for each of the probe's log calls (logger-probe.ts). */
  | { kind: 'logged'; calls: string[][] }
  /** An application provider's onModuleDestroy, and whether the manager still ran then. */
  | { kind: 'destroyed'; managerRunning: boolean }
  | { kind: 'log'; level: string; text: string }
  | { kind: 'failed'; error: string };

export function emit(event: ProbeEvent): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

/** Nest's logger in the probe: every call a 'log' event, with its parameters and an Error's stack. */
export class EventLogger implements LoggerService {
  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: string, message: unknown, params: unknown[]): void {
    emit({ kind: 'log', level, text: [message, ...params].map(textOf).join(' ') });
  }
}

function textOf(value: unknown): string {
  if (value instanceof Error) return value.stack ?? String(value);
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
