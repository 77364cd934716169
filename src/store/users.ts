/** UI accounts (SPEC 11; accounts/accounts.ts): one row per person, email normalised. */
import type { UsersTable } from './schema.js';
import type { Db } from './store.js';

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
};
