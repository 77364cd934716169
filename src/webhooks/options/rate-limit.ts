/**
 * `options.rateLimit` (SPEC 5b): at most `requests` per `perSeconds` per trigger, counted in fixed
 * windows that start with the first request after the previous window ended. One `hookflow start`
 * counts in its memory (cheap, and it is the only process); processes sharing a PostgreSQL store
 * count in the store, so the limit holds for the trigger however many webhook processes share the
 * traffic (one upsert per request, and only on triggers that set a rate limit).
 */
import { sql } from 'kysely';
import type { Db } from '../../store/store.js';

export interface RateLimiter {
  /** 0 when the request may pass, else the seconds until the window resets (for Retry-After). */
  take(key: string, requests: number, perSeconds: number, now?: number): number | Promise<number>;
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
 * The window as a row: one atomic upsert starts a new window or counts into the current one
 * (PostgreSQL locks the row, so concurrent processes count one after the other). Refused requests
 * count too; the first `requests` of a window pass either way.
 */
export class StoreRateLimiter implements RateLimiter {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async take(key: string, requests: number, perSeconds: number, now = Date.now()): Promise<number> {
    const length = perSeconds * 1000;
    const expired = sql<boolean>`rate_limits.window_start <= ${now - length}`;
    const row = await this.#db
      .insertInto('rate_limits')
      .values({ key, window_start: now, count: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          window_start: sql`case when ${expired} then ${now} else rate_limits.window_start end`,
          count: sql`case when ${expired} then 1 else rate_limits.count + 1 end`,
        }),
      )
      .returning(['window_start', 'count'])
      .executeTakeFirstOrThrow();
    return row.count > requests ? retryAfter(Number(row.window_start), length, now) : 0;
  }
}
