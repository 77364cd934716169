import { timingSafeEqual, createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { MaybePromise } from '../../shared/maybe-promise.js';

export interface AuthInput {
  /** Lower-cased header names. */
  headers: Record<string, string | string[] | undefined>;
  /** The exact bytes received (signatures are computed over these). */
  rawBody: Buffer;
  /** epoch ms, for timestamped signatures. */
  now: number;
}

export interface AuthResult {
  /** Lower-cased names of headers whose values must not be stored (they become "***"). */
  maskedHeaders: string[];
  claims?: Record<string, unknown>;
}

export type Verifier<A> = (auth: A, input: AuthInput) => MaybePromise<AuthResult>;

export function header(input: AuthInput, name: string): string | undefined {
  const v = input.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Constant-time equality of two strings. Both sides are hashed first so the comparison runs on
 * equal-length buffers and its time says nothing about the expected value's length.
 */
export function safeEqual(actual: string, expected: string): boolean {
  const a = createHash('sha256').update(actual).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function unauthorized(message: string, hint: string, wwwAuthenticate?: string): AppError {
  return new AppError('unauthorized', message, {
    hint,
    ...(wwwAuthenticate ? { headers: { 'www-authenticate': wwwAuthenticate } } : {}),
  });
}
