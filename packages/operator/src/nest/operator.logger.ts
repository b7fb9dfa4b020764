import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { JsonLineLogger } from './json-line-logger.js';

/** What operatorLogger takes: the format and the level. */
export interface OperatorLoggerOptions {
  /** 'json' (one object per line, for log collectors) or 'text'. Default: LOG_FORMAT, else json unless stdout is a terminal. */
  format?: 'json' | 'text';
  /** The most verbose level written. Default: LOG_LEVEL, else 'log' (info). */
  level?: LogLevel;
}

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/**
 * Nest's ConsoleLogger set up for an operator: JSON lines when not on a terminal (what a
 * pod's log collector parses), text with colours on one. In JSON, one line per call on every
 * Nest version the packages accept, the runtime's fields (controller, namespace, name,
 * reconcileID) as top-level keys. Pass it to
 * `NestFactory.createApplicationContext(AppModule, { logger: operatorLogger() })`.
 */
export function operatorLogger(
  options: OperatorLoggerOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
  isTerminal = Boolean(process.stdout.isTTY),
): ConsoleLogger {
  const format =
    options.format ?? choice(env.LOG_FORMAT, 'LOG_FORMAT', ['json', 'text']) ?? (isTerminal ? 'text' : 'json');
  const level = options.level ?? choice(env.LOG_LEVEL, 'LOG_LEVEL', LEVELS) ?? 'log';
  const logLevels = LEVELS.slice(0, LEVELS.indexOf(level) + 1);
  return format === 'json' ? new JsonLineLogger({ json: true, logLevels }) : new ConsoleLogger({ logLevels });
}

function choice<T extends string>(value: string | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === '') return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`${name}=${value} is not one of ${allowed.join(', ')}`);
}
