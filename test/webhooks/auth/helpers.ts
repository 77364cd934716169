import { expect } from 'vitest';
import { AppError } from '../../../src/errors.js';
import type { AuthInput } from '../../../src/webhooks/auth/index.js';

/** A fixed receive time (epoch ms) so timestamp checks are deterministic. */
export const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
export const nowSeconds = (ms = NOW) => Math.floor(ms / 1000);

/** An AuthInput as the HTTP edge builds it: lower-cased header names, the body as received. */
export function request(headers: Record<string, string>, body: string | Buffer, now = NOW): AuthInput {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { headers: lower, rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body), now };
}

/** The promise rejects with AppError('unauthorized') / 401; returns it for further checks. */
export async function unauthorized(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the request to be refused').toBeInstanceOf(AppError);
  const appErr = err as AppError;
  expect(appErr.code).toBe('unauthorized');
  expect(appErr.status).toBe(401);
  expect(appErr.hint).toBeTruthy();
  return appErr;
}
