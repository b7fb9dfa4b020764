/**
 * The runtime's logging seam. The Nest layer adapts Nest's LoggerService to it, so an
 * app's logger (pino, winston, JSON) applies; the runtime itself depends on no logger.
 */
export interface RuntimeLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: RuntimeLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Logs to the console, for scripts and tests that have no Nest logger. */
export const consoleLogger: RuntimeLogger = {
  debug: () => {},
  info: (message, fields) => console.log(message, fields ?? ''),
  warn: (message, fields) => console.warn(message, fields ?? ''),
  error: (message, fields) => console.error(message, fields ?? ''),
};
