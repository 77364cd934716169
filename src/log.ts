import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

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
 *
 * `format` (config.log.format): JSON lines for machines; readable lines (pino-pretty) for a
 * person — `auto` picks those when the output is a terminal, so `npm start` in a shell reads well
 * and the same command under a supervisor or in a container still logs JSON.
 */
export function createLogger(
  level: string,
  fd: 1 | 2 = 1,
  format: 'auto' | 'json' | 'pretty' = 'json',
): Logger {
  const options = { level, redact: { paths: REDACT, censor: '***' }, base: { service: 'hookflow' } };
  const tty = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  if (format === 'pretty' || (format === 'auto' && tty)) {
    return pino(
      options,
      pretty({
        destination: fd,
        // A person reads these; a synchronous write keeps the last line before an exit.
        sync: true,
        colorize: tty === true,
        translateTime: 'SYS:HH:MM:ss',
        ignore: 'pid,hostname,service',
        singleLine: true,
      }),
    );
  }
  return pino(options, pino.destination({ fd, sync: false }));
}
