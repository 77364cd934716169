/** First-start setup codes (SPEC 11; accounts/setup-codes.ts), stored as the sha256 of each code. */
import type { SetupCodesTable } from './schema.js';
import type { Db } from './store.js';

export const setupCodesRepo = {
  async insert(db: Db, row: SetupCodesTable): Promise<void> {
    await db.insertInto('setup_codes').values(row).execute();
  },

  /** The hashes of the codes not expired at `now` (ISO-8601), newest first, at most `limit`. */
  async valid(db: Db, now: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('setup_codes')
      .select('code_hash')
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => r.code_hash);
  },

  /** Deletes the codes expired at `now`, and all but the newest `keep` of the others. */
  async prune(db: Db, now: string, keep: number): Promise<void> {
    await db.deleteFrom('setup_codes').where('expires_at', '<=', now).execute();
    const kept = db.selectFrom('setup_codes').select('code_hash').orderBy('created_at', 'desc').limit(keep);
    await db.deleteFrom('setup_codes').where('code_hash', 'not in', kept).execute();
  },

  async deleteAll(db: Db): Promise<void> {
    await db.deleteFrom('setup_codes').execute();
  },
};
