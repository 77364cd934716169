/**
 * The pipeline's limits step (SPEC 3, 5b `maxBodyBytes`): how large a body a trigger accepts, and
 * its refusal (413 `payload_too_large`) as early as it can be made: from Content-Length before
 * anything is read, and by the body source while it reads (BodySource.read stops at the limit, so a
 * 1 GiB upload to a 1 MiB trigger costs 1 MiB). What a body may hold once read (depth, node
 * counts) is the parsers' to bound (parse/scan.ts).
 */
import { AppError } from '../errors.js';
import type { WebhookTrigger } from '../model/workflow.js';

/** The trigger's own limit (`options.maxBodyBytes`), never above the server's (HOOKFLOW_MAX_BODY_BYTES). */
export function bodyLimit(trigger: WebhookTrigger, serverMax: number): number {
  const own = trigger.options.maxBodyBytes;
  return own === undefined ? serverMax : Math.min(own, serverMax);
}

/** Refuse a body whose declared size is over `limit`, before reading it. */
export function checkDeclaredLength(limit: number, contentLength: string | string[] | undefined): void {
  if (contentLength !== undefined && Number(contentLength) > limit) throw tooLarge(limit);
}

/** Refuse a body read past `limit` (a source that did not stop at it). */
export function checkLength(body: Buffer, limit: number): void {
  if (body.length > limit) throw tooLarge(limit);
}

/** 413 for a body over `limit`; also the body source's answer while it reads. */
export function tooLarge(limit: number): AppError {
  return new AppError(
    'payload_too_large',
    `The request body is larger than this webhook accepts (${limit} bytes).`,
    {
      hint: "Send a smaller body, or raise the trigger's options.maxBodyBytes (up to HOOKFLOW_MAX_BODY_BYTES).",
    },
  );
}
