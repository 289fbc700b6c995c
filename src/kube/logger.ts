/**
 * The process logger: pino writing JSON lines to stdout, synchronously and without transports (a
 * transport's worker thread can keep a process, or jest, from exiting). Components take a Logger
 * and bind their context with child loggers: `{controller}`, then `{key}` per reconcile.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** A root logger; `destination` defaults to stdout (tests pass a stream to capture, or level silent). */
export function createLogger(
  options: { level?: LogLevel; name?: string; destination?: DestinationStream } = {},
): Logger {
  const config = {
    level: options.level ?? 'info',
    ...(options.name ? { name: options.name } : {}),
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination
    ? pino(config, options.destination)
    : pino(config, pino.destination({ dest: 1, sync: true }));
}

/** A logger that drops everything, for tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
