/**
 * Retries of steps that reach another system (SPEC 7c: `http`; 7e: `email`): `retry: {attempts,
 * backoffMs, on}` repeats an attempt that failed in a way `on` names, after `backoffMs · 2^(n-1)`
 * with jitter (half fixed, half random), or after what the server asked (`Retry-After`, capped at
 * 1 hour). A pause under a second is taken in the step; a longer one parks the execution
 * (`waiting`, no executor slot held) and the step resumes with its next attempt, its attempts so
 * far carried in the park's state. Every attempt is recorded in the step record's `attempts`.
 *
 * A step type keeps its own loop (what an attempt is, which failures `on` names) and asks
 * `nextAttempt` what to do after each retryable failure.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import Type from 'typebox';
import type { StepContext } from './steps/types.js';

/** Pauses shorter than this are taken inside the step; longer ones park the execution. */
export const PARK_FROM_MS = 1_000;
/** `Retry-After` is honoured up to this (SPEC 7c). */
export const MAX_RETRY_AFTER_MS = 3_600_000;
export const DEFAULT_BACKOFF_MS = 1_000;
/** Most attempts a step may ask for. */
const MAX_ATTEMPTS = 50;

/** One attempt as the step record keeps it (SPEC 7c). */
export type Attempt = { at: string; status: number } | { at: string; error: string };

/** The `retry` field of a step whose failures are named by `on` (`network`, `429`, `5xx` …). */
export function RetrySchema<const On extends readonly string[]>(on: On) {
  return Type.Object(
    {
      attempts: Type.Integer({ minimum: 1, maximum: MAX_ATTEMPTS }),
      backoffMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RETRY_AFTER_MS })),
      on: Type.Optional(
        Type.Array(Type.Union(on.map((o) => Type.Literal(o))), {
          uniqueItems: true,
          maxItems: on.length,
        }),
      ),
    },
    { additionalProperties: false },
  );
}

export interface RetryPolicy {
  /** Attempts in all (1: no retry). */
  attempts: number;
  backoffMs: number;
  /** The failures retried. */
  on: ReadonlySet<string>;
}

/** A step's `retry` as a policy (`on` defaults to `defaultOn`; no `retry`: one attempt). */
export function retryPolicy(
  retry: { attempts: number; backoffMs?: number; on?: readonly string[] } | undefined,
  defaultOn: readonly string[],
): RetryPolicy {
  return {
    attempts: retry?.attempts ?? 1,
    backoffMs: retry?.backoffMs ?? DEFAULT_BACKOFF_MS,
    on: new Set(retry?.on ?? defaultOn),
  };
}

/** The attempts made before a park, carried in its state (`{attempts}`); none on a first run. */
export function resumedAttempts(state: unknown): Attempt[] {
  const list = (state as { attempts?: unknown } | undefined)?.attempts;
  return Array.isArray(list) ? (list as Attempt[]).slice(0, MAX_ATTEMPTS) : [];
}

/**
 * After attempt `done` (1-based) failed in a way the policy retries: `'again'` once a short pause
 * was taken here, `{park}` to pause longer parked (the step returns it with `output: null`; it runs
 * again with `ctx.resume.state` = `{attempts}`), or undefined when no attempt is left (or the run
 * is out of time): the failure stands.
 */
export async function nextAttempt(
  ctx: Pick<StepContext, 'signal'>,
  policy: RetryPolicy,
  attempts: readonly Attempt[],
  retryAfter?: string | string[],
): Promise<'again' | { park: { until: Date; state: { attempts: Attempt[] } } } | undefined> {
  const done = attempts.length;
  if (done >= policy.attempts || ctx.signal.aborted) return undefined;
  const delay = pauseBefore(done + 1, policy.backoffMs, retryAfter);
  if (delay >= PARK_FROM_MS)
    return { park: { until: new Date(Date.now() + delay), state: { attempts: [...attempts] } } };
  // Cut short when the run ends (the abort rejects): the next attempt then fails on the signal.
  await sleep(delay, undefined, { signal: ctx.signal }).catch(() => undefined);
  return 'again';
}

/**
 * The pause before attempt `next` (2 or more): what `Retry-After` asks (seconds or an HTTP date,
 * capped at an hour), else `backoffMs · 2^(next-2)` with "equal jitter" (half of it fixed, half
 * random, as AWS's backoff note calls it): retries of many executions spread out, and the pause
 * still grows.
 */
export function pauseBefore(
  next: number,
  backoffMs: number,
  retryAfter: string | string[] | undefined,
): number {
  const asked = retryAfterMs(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  if (asked !== undefined) return Math.min(asked, MAX_RETRY_AFTER_MS);
  const base = Math.min(backoffMs * 2 ** (next - 2), MAX_RETRY_AFTER_MS);
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** `Retry-After` (RFC 9110 10.2.3): delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP-date names its day and month; Date.parse alone also reads "-5" as a year.
  if (!/[A-Za-z]{3}/.test(v)) return undefined;
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
