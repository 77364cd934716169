/**
 * The rate limiter's windows (webhooks/options/rate-limit.ts, `options.rateLimit`), one row per
 * trigger and mode: when the current window started and how many requests it has counted.
 */
import { sql } from 'kysely';
import type { Db } from './store.js';

export const rateLimitsRepo = {
  /**
   * Counts one request into `key`'s window, in one atomic upsert: a window that started at or
   * before `now - lengthMs` is over, so the request starts a new one; else it counts into the
   * current one (PostgreSQL locks the row, so concurrent processes count one after the other).
   * Returns the window as it is after this request.
   */
  async count(db: Db, key: string, now: number, lengthMs: number): Promise<{ start: number; count: number }> {
    const expired = sql<boolean>`rate_limits.window_start <= ${now - lengthMs}`;
    const row = await db
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
    // PostgreSQL returns the bigint as a string.
    return { start: Number(row.window_start), count: row.count };
  },
};
