/** Credentials rows (SPEC 7c). `data` is always the sealed JSON of the type's fields. */
import type { CredentialRow } from './schema.js';
import type { Db } from './store.js';

export const credentialsRepo = {
  async insert(db: Db, row: CredentialRow): Promise<void> {
    await db.insertInto('credentials').values(row).execute();
  },

  async get(db: Db, id: string): Promise<CredentialRow | undefined> {
    return db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** The rows of these ids that exist (any order). */
  async getMany(db: Db, ids: readonly string[]): Promise<CredentialRow[]> {
    if (ids.length === 0) return [];
    return db.selectFrom('credentials').selectAll().where('id', 'in', ids).execute();
  },

  /** The rows named `name` (names need not be unique: at most `limit`, newest first). */
  async byName(db: Db, name: string, limit = 2): Promise<CredentialRow[]> {
    return db
      .selectFrom('credentials')
      .selectAll()
      .where('name', '=', name)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  },

  /** Newest first; `before` is the id of the last item of the previous page. */
  async list(db: Db, opts: { limit: number; before?: string | undefined }): Promise<CredentialRow[]> {
    let q = db.selectFrom('credentials').selectAll().orderBy('id', 'desc').limit(opts.limit);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.execute();
  },

  /** Every row's id and sealed data (`hookflow secrets rotate`). */
  async listData(db: Db): Promise<{ id: string; data: string }[]> {
    return db.selectFrom('credentials').select(['id', 'data']).execute();
  },

  async setData(db: Db, id: string, data: string): Promise<void> {
    await db.updateTable('credentials').set({ data }).where('id', '=', id).execute();
  },

  async update(db: Db, row: CredentialRow): Promise<void> {
    const { id, created_at: _c, ...rest } = row;
    await db.updateTable('credentials').set(rest).where('id', '=', id).execute();
  },

  async delete(db: Db, id: string): Promise<boolean> {
    const res = await db.deleteFrom('credentials').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
