/** UI accounts (SPEC 11, 11b; accounts/): one row per member, email normalised. */
import type { Role } from '../shared/roles.js';
import type { UsersTable } from './schema.js';
import type { Db } from './store.js';

/** A member as lists show it: never the password hash. */
export type MemberRow = Omit<UsersTable, 'password_hash'>;

export const usersRepo = {
  /** Whether any account exists (the first start creates the owner). */
  async any(db: Db): Promise<boolean> {
    const row = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
    return row !== undefined;
  },

  async insert(db: Db, row: UsersTable): Promise<void> {
    await db.insertInto('users').values(row).execute();
  },

  async findByEmail(db: Db, email: string): Promise<UsersTable | undefined> {
    return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  },

  async get(db: Db, id: string): Promise<MemberRow | undefined> {
    return db
      .selectFrom('users')
      .select(['id', 'email', 'role', 'created_at'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Every member, oldest first (a team is small: no paging). */
  async list(db: Db): Promise<MemberRow[]> {
    return db
      .selectFrom('users')
      .select(['id', 'email', 'role', 'created_at'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async setRole(db: Db, id: string, role: Role): Promise<void> {
    await db.updateTable('users').set({ role }).where('id', '=', id).execute();
  },

  /** The owner becomes an admin (a transfer of ownership, with setRole of the next owner). */
  async demoteOwner(db: Db): Promise<void> {
    await db.updateTable('users').set({ role: 'admin' }).where('role', '=', 'owner').execute();
  },

  /** Deletes the member with their sessions and API tokens (run it in a transaction). */
  async delete(db: Db, id: string): Promise<boolean> {
    await db.deleteFrom('sessions').where('user_id', '=', id).execute();
    await db.deleteFrom('api_tokens').where('user_id', '=', id).execute();
    const res = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
