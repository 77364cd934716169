import type { Role } from '../shared/roles.js';
import type { ApiTokenRow } from './schema.js';
import type { Db } from './store.js';

/** A token with its member's current role (null: the token is the owner's, see ApiTokensTable). */
export type ApiTokenWithMember = ApiTokenRow & { member_role: Role | null; member_exists: boolean };

export const tokensRepo = {
  async insert(db: Db, row: ApiTokenRow): Promise<void> {
    await db.insertInto('api_tokens').values(row).execute();
  },
  async findByHash(db: Db, hash: string): Promise<ApiTokenRow | undefined> {
    return db.selectFrom('api_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  },
  /** The token of `hash` with its member's role, read at each call so role changes apply at once. */
  async findWithMember(db: Db, hash: string): Promise<ApiTokenWithMember | undefined> {
    const row = await db
      .selectFrom('api_tokens')
      .leftJoin('users', 'users.id', 'api_tokens.user_id')
      .selectAll('api_tokens')
      .select(['users.role as member_role', 'users.id as member_id'])
      .where('api_tokens.token_hash', '=', hash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { member_id, ...rest } = row;
    return { ...rest, member_role: row.member_role ?? null, member_exists: member_id !== null };
  },
  /** Newest first; only `userId`'s tokens when given. */
  async list(
    db: Db,
    opts: { limit: number; before?: string | undefined; userId?: string | null | undefined },
  ): Promise<ApiTokenRow[]> {
    let q = db.selectFrom('api_tokens').selectAll().orderBy('id', 'desc').limit(opts.limit);
    if (opts.before) q = q.where('id', '<', opts.before);
    if (opts.userId === null) q = q.where('user_id', 'is', null);
    else if (opts.userId !== undefined) q = q.where('user_id', '=', opts.userId);
    return q.execute();
  },
  async get(db: Db, id: string): Promise<ApiTokenRow | undefined> {
    return db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  },
  async touch(db: Db, id: string, at: string): Promise<void> {
    await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  },
  async delete(db: Db, id: string): Promise<boolean> {
    const res = await db.deleteFrom('api_tokens').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
