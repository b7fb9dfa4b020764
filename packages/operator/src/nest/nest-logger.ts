import { Logger, type LoggerService } from '@nestjs/common';
import type { RuntimeLogger } from '@nestor/core';

/**
 * The runtime's logs through Nest's Logger, so the application's logger (pino, winston,
 * Nest's JSON ConsoleLogger) applies. Fields go as a trailing object, which JSON loggers
 * merge and the default console logger prints.
 */
export function runtimeLogger(context: string): RuntimeLogger {
  const logger = new Logger(context);
  const with_ = (fields?: Record<string, unknown>) => (fields && Object.keys(fields).length ? [fields] : []);
  return {
    debug: (message, fields) => logger.debug(message, ...with_(fields)),
    info: (message, fields) => logger.log(message, ...with_(fields)),
    warn: (message, fields) => logger.warn(message, ...with_(fields)),
    error: (message, fields) => logger.error(message, ...with_(fields)),
  };
}

/** A runtime logger seen as Nest's LoggerService, for the ReconcileContext. */
export function asNestLogger(log: RuntimeLogger): Pick<LoggerService, 'log' | 'warn' | 'error' | 'debug'> {
  const fields = (params: unknown[]) =>
    params.length ? { details: params.length === 1 ? params[0] : params } : undefined;
  return {
    log: (message: unknown, ...params: unknown[]) => log.info(String(message), fields(params)),
    warn: (message: unknown, ...params: unknown[]) => log.warn(String(message), fields(params)),
    error: (message: unknown, ...params: unknown[]) => log.error(String(message), fields(params)),
    debug: (message: unknown, ...params: unknown[]) => log.debug(String(message), fields(params)),
  };
}
