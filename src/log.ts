import pino, { type Logger } from 'pino';

/** Header and field names whose values never reach a log line. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-hub-signature-256"]',
  'req.headers["stripe-signature"]',
  'req.headers["x-slack-signature"]',
  'req.headers["x-shopify-hmac-sha256"]',
  'req.headers["webhook-signature"]',
  'headers.authorization',
  'headers.cookie',
  '*.password',
  '*.secret',
  '*.token',
];

/**
 * The root logger. `fd` 1 for the server; CLI commands whose stdout is their output (a token,
 * an export) log to fd 2. Asynchronous writes keep logging off the request's critical path.
 */
export function createLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino(
    { level, redact: { paths: REDACT, censor: '***' }, base: { service: 'hookflow' } },
    pino.destination({ fd, sync: false }),
  );
}
