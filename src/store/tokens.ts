import type { ApiTokenRow } from './schema.js';
import type { Db } from './store.js';

export const tokensRepo = {
  async insert(db: Db, row: ApiTokenRow): Promise<void> {
    await db.insertInto('api_tokens').values(row).execute();
  },
  async findByHash(db: Db, hash: string): Promise<ApiTokenRow | undefined> {
    return db.selectFrom('api_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  },
  async list(db: Db, opts: { limit: number; before?: string | undefined }): Promise<ApiTokenRow[]> {
    let q = db.selectFrom('api_tokens').selectAll().orderBy('id', 'desc').limit(opts.limit);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.execute();
  },
  async touch(db: Db, id: string, at: string): Promise<void> {
    await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  },
  async delete(db: Db, id: string): Promise<boolean> {
    const res = await db.deleteFrom('api_tokens').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
