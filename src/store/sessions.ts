/** Sign-in sessions (SPEC 11; accounts/accounts.ts), keyed by the sha256 of the cookie value. */
import type { SessionsTable, UsersTable } from './schema.js';
import type { Db } from './store.js';

/** A session with its account, as a request's cookie finds it. */
export interface SessionWithUser {
  user_id: string;
  email: string;
  role: UsersTable['role'];
  csrf_token: string;
  expires_at: string;
}

export const sessionsRepo = {
  async insert(db: Db, row: SessionsTable): Promise<void> {
    await db.insertInto('sessions').values(row).execute();
  },

  /** The session `id` (expired or not) with its account. */
  async get(db: Db, id: string): Promise<SessionWithUser | undefined> {
    return db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select([
        'users.id as user_id',
        'users.email',
        'users.role',
        'sessions.csrf_token',
        'sessions.expires_at',
      ])
      .where('sessions.id', '=', id)
      .executeTakeFirst();
  },

  async delete(db: Db, id: string): Promise<void> {
    await db.deleteFrom('sessions').where('id', '=', id).execute();
  },

  /** Deletes the sessions expired before `now` (ISO-8601). */
  async deleteExpired(db: Db, now: string): Promise<void> {
    await db.deleteFrom('sessions').where('expires_at', '<', now).execute();
  },
};
