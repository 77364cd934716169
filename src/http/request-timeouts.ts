/**
 * Requests whose bodies stop arriving (HOOKFLOW_BODY_TIMEOUT). Node has a timeout for the head and
 * for the whole request (set in server.ts), none for a body that falls silent: a client that sends
 * headers announcing a body and then nothing held its request's place for the whole request timeout.
 * The webhook front watches its own reads (routes/webhooks.ts readBody); Fastify's bodies pass
 * through `bodyIdleGuard`.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { AppError } from '../errors.js';

/** The answer to a body that fell silent for `timeoutMs`; it closes the connection (the rest may still come). */
export function bodyTimedOut(timeoutMs: number): AppError {
  const seconds = Math.round(timeoutMs / 1000);
  return new AppError('request_timeout', `No part of the request body arrived for ${seconds} seconds.`, {
    hint: `Send the body without pausing for ${seconds} seconds or more (HOOKFLOW_BODY_TIMEOUT).`,
    headers: { connection: 'close' },
  });
}

/**
 * For Fastify's preParsing hook: passes `payload` through and fails with bodyTimedOut when no chunk
 * arrives for `timeoutMs`, so that Fastify answers 408 through its error handler. A Transform,
 * because watching the request's own 'data' events before Fastify listens could lose chunks.
 * Armed when Fastify starts reading it (having listened for its errors), so a body Fastify never
 * reads (a GET's, an unsupported Content-Type's) is not timed; disarmed when the body ends or the
 * answer is sent.
 */
export function bodyIdleGuard(
  payload: NodeJS.ReadableStream,
  timeoutMs: number,
  answered: { once(event: 'close', listener: () => void): unknown },
): Transform {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      timer?.refresh();
      callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      clearTimeout(timer);
      callback();
    },
  });
  guard.once('resume', () => {
    if (!guard.destroyed) timer = setTimeout(() => guard.destroy(bodyTimedOut(timeoutMs)), timeoutMs);
  });
  guard.once('close', () => clearTimeout(timer));
  answered.once('close', () => clearTimeout(timer));
  payload.pipe(guard);
  return guard;
}
