/**
 * The log of an operator (or one of its controllers) an e2e test starts in its own process: silent,
 * unless SKYHOOK_E2E_LOG names a file; then the debug log is appended to it (one JSON line each), to
 * see after a failed run what the operator saw and did.
 */
import { pino } from 'pino';
import { createLogger, silentLogger, type Logger } from '../../src/kube/logger.js';

export function e2eOperatorLogger(): Logger {
  const file = process.env['SKYHOOK_E2E_LOG'];
  if (!file) return silentLogger();
  return createLogger({ level: 'debug', destination: pino.destination({ dest: file, append: true, sync: true }) });
}
