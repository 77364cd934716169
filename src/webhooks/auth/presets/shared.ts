/**
 * What every HMAC preset shares: a digest over the exact raw bytes, strict decoding of the received
 * signature, constant-time comparison of digests (never of strings), the replay window, and the 401s.
 * A preset only knows its provider's header layout and signed-content formula.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppError } from '../../../errors.js';
import type { AuthConfig } from '../../../model/workflow.js';
import { type AuthInput, type AuthResult, header, unauthorized } from '../types.js';

export type HmacAuth = Extract<AuthConfig, { type: 'hmac' }>;
export type Preset = (auth: HmacAuth, input: AuthInput) => AuthResult;

export const DEFAULT_TOLERANCE_SECONDS = 300;

/** HMAC over `parts` in order. Buffers go in byte for byte (the body is never decoded), strings as UTF-8. */
export function hmac(
  algorithm: 'sha1' | 'sha256' | 'sha512',
  key: string | Buffer,
  ...parts: (string | Buffer)[]
) {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

// Buffer.from(text, 'hex'|'base64') silently skips characters it does not understand, so a garbled
// signature would quietly become different bytes. Only canonical text is decoded; anything else is undefined.
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function decode(text: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  const ok = text.length > 0 && (encoding === 'hex' ? HEX : BASE64).test(text);
  return ok ? Buffer.from(text, encoding) : undefined;
}

/**
 * Constant-time digest comparison. timingSafeEqual needs equal lengths, so lengths are checked first;
 * that leaks nothing, because a digest's length follows from the (public) algorithm.
 */
export function digestMatches(expected: Buffer, received: Buffer | undefined): boolean {
  return received !== undefined && received.length === expected.length && timingSafeEqual(expected, received);
}

/** Several signatures are sent while a secret is rotated; any may match. All are compared (no early exit). */
export function anyMatches(expected: Buffer, candidates: (Buffer | undefined)[]): boolean {
  return candidates.map((c) => digestMatches(expected, c)).some(Boolean);
}

/** The header's value, or a 401 naming the header that is missing. */
export function requireHeader(input: AuthInput, name: string, provider: string): string {
  const value = header(input, name);
  if (value === undefined || value === '') {
    throw unauthorized(
      `The ${name} header is missing; this webhook only accepts requests signed by ${provider}.`,
      `Configure ${provider} to sign its webhooks with the secret set on the trigger.`,
    );
  }
  return value;
}

export function malformed(name: string, expected: string): AppError {
  return unauthorized(`The ${name} header is malformed.`, `Expected ${expected}.`);
}

export function mismatch(name: string, provider: string): AppError {
  return unauthorized(
    `The ${name} signature does not match the request.`,
    `Check that the trigger's secret is the one ${provider} signs with, and that nothing on the way rewrites the body.`,
  );
}

/** Unix seconds as the providers send them: digits only (no sign, fraction or exponent). */
export function isUnixSeconds(text: string): boolean {
  return /^\d{1,12}$/.test(text);
}

/**
 * Replay window for timestamped presets: |now − timestamp| ≤ toleranceSeconds (default 300, as
 * Stripe, Slack and Standard Webhooks recommend). Future timestamps count too, so a sender cannot
 * pre-date a request to stretch its lifetime. Call it after the signature matched: the timestamp is
 * only trustworthy once signed, and the "too old" message then goes only to someone who holds the secret.
 */
export function checkFresh(auth: HmacAuth, input: AuthInput, name: string, seconds: string): void {
  const tolerance = auth.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(input.now / 1000 - Number(seconds)) > tolerance) {
    throw unauthorized(
      `The ${name} timestamp is more than ${tolerance} seconds away from the server's clock.`,
      "Old requests are refused so a captured one cannot be replayed; check the sender's and the server's clocks.",
    );
  }
}

/** A timestamped preset's request once its headers are parsed: what was signed, and what was sent. */
export interface TimestampedSignature {
  /** HMAC key: the secret as the provider uses it (raw, or decoded first). */
  key: string | Buffer;
  /** Signed content before the raw body, e.g. `"<t>."`; the body follows byte for byte. */
  prefix: string;
  /** Every received signature, decoded (undefined where it did not decode); any may match. */
  candidates: (Buffer | undefined)[];
  /** Unix seconds, already checked with isUnixSeconds. */
  timestamp: string;
  /** Header named when the signature does not match. */
  signatureHeader: string;
  /** Name used in the "timestamp too far away" message. */
  timestampHeader: string;
  provider: string;
}

/**
 * The part Stripe, Slack and Standard Webhooks share once their headers are parsed: HMAC-SHA256 over
 * `prefix` + raw body, constant-time comparison with every candidate, then the replay window (only
 * after the signature matched; see checkFresh).
 */
export function verifyTimestamped(auth: HmacAuth, input: AuthInput, signed: TimestampedSignature): void {
  const expected = hmac('sha256', signed.key, signed.prefix, input.rawBody);
  if (!anyMatches(expected, signed.candidates)) throw mismatch(signed.signatureHeader, signed.provider);
  checkFresh(auth, input, signed.timestampHeader, signed.timestamp);
}
