/**
 * `options.rateLimit` (SPEC 5b): at most `requests` per `perSeconds` per trigger, counted in fixed
 * windows that start with the first request after the previous window ended. One `hookflow start`
 * counts in its memory (cheap, and it is the only process); processes sharing a PostgreSQL store
 * count in the store, so the limit holds for the trigger however many webhook processes share the
 * traffic (one upsert per request, and only on triggers that set a rate limit).
 */
import { rateLimitsRepo } from '../../store/rate-limits.js';
import type { Db } from '../../store/store.js';
import type { MaybePromise } from '../../shared/maybe-promise.js';

export interface RateLimiter {
  /** 0 when the request may pass, else the seconds until the window resets (for Retry-After). */
  take(key: string, requests: number, perSeconds: number, now?: number): MaybePromise<number>;
}

/** Seconds until a window that started at `start` ends, at least 1. */
function retryAfter(start: number, length: number, now: number): number {
  return Math.max(1, Math.ceil((start + length - now) / 1000));
}

export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  take(key: string, requests: number, perSeconds: number, now = Date.now()): number {
    const length = perSeconds * 1000;
    let window = this.#windows.get(key);
    if (!window || now - window.start >= length) {
      if (this.#windows.size > 100_000) this.#windows.clear();
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= requests) return retryAfter(window.start, length, now);
    window.count++;
    return 0;
  }
}

/**
 * The window as a row (store/rate-limits.ts), counted by one atomic upsert, so processes sharing
 * the store count one after the other. Refused requests count too; the first `requests` of a
 * window pass either way.
 */
export class StoreRateLimiter implements RateLimiter {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async take(key: string, requests: number, perSeconds: number, now = Date.now()): Promise<number> {
    const length = perSeconds * 1000;
    const window = await rateLimitsRepo.count(this.#db, key, now, length);
    return window.count > requests ? retryAfter(window.start, length, now) : 0;
  }
}
