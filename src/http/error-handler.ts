/**
 * Every error leaves as the SPEC body `{code, message, hint?}` with its status: AppErrors as they
 * are, Fastify's own errors mapped to our codes, a store that cannot take writes as
 * `store_unavailable` (503; store/unavailable.ts), anything else as `internal_error` (logged with
 * the stack; the client sees no internals). `internal_error` is logged at error, the rest at debug:
 * a store outage is logged once by the store's health (store/health.ts), not once per request.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, coerceError, type FieldError } from '../errors.js';
import type { StoreHealth } from '../store/health.js';
import { isStoreUnavailable, storeUnavailable } from '../store/unavailable.js';
import { validationFailed } from '../workflows/service.js';

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const fe = (err ?? {}) as Partial<FastifyError> & {
    validation?: { instancePath?: string; message?: string; params?: Record<string, unknown> }[];
    validationContext?: string;
  };
  if (Array.isArray(fe.validation)) {
    const fields: FieldError[] = fe.validation.slice(0, 20).map((v) => {
      // The offending key of "must not have additional properties" / "must have required property".
      const key = v.params?.additionalProperty ?? v.params?.missingProperty;
      const extra = typeof key === 'string' ? `/${key}` : '';
      const where = fe.validationContext && fe.validationContext !== 'body' ? `/${fe.validationContext}` : '';
      return { field: `${where}${v.instancePath ?? ''}${extra}` || '/', message: v.message ?? 'is invalid' };
    });
    return validationFailed(fields);
  }
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fe.statusCode === 413) {
    return new AppError('payload_too_large', 'The request body is larger than this server accepts.', {
      hint: 'Send a smaller body (see HOOKFLOW_MAX_BODY_BYTES).',
    });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('invalid_body', 'This endpoint takes a JSON body.', {
        hint: 'Send the body with Content-Type: application/json.',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_body', 'The request body is not valid JSON.', {
        hint: 'Check the JSON syntax (quotes, commas, brackets) and send it again.',
      });
  }
  if (fe.statusCode === 400) {
    return new AppError('invalid_body', fe.message ?? 'The request could not be read.', {
      hint: 'Check the request body and its Content-Type.',
    });
  }
  if (isStoreUnavailable(err)) return storeUnavailable(err);
  return coerceError(err);
}

/** Fastify's error handler; `health` hears of the API's writes (and reads) the store could not take. */
export function errorHandler(
  health: StoreHealth,
): (err: unknown, request: FastifyRequest, reply: FastifyReply) => void {
  return (err, request, reply) => {
    const appError = toAppError(err);
    if (appError.code === 'internal_error') {
      request.log.error({ err }, 'request failed');
    } else {
      if (appError.code === 'store_unavailable') health.failed(appError);
      request.log.debug({ code: appError.code }, appError.message);
    }
    sendError(reply, appError);
  };
}

export function sendError(reply: FastifyReply, error: AppError): void {
  if (error.headers) reply.headers(error.headers);
  reply.code(error.status).type('application/json; charset=utf-8').send(JSON.stringify(error));
}
