/** Pending invitations (SPEC 11b; accounts/members.ts), keyed by the sha256 of the link's token. */
import type { InvitationsTable } from './schema.js';
import type { Db } from './store.js';

export type InvitationRow = InvitationsTable;

export const invitationsRepo = {
  async insert(db: Db, row: InvitationsTable): Promise<void> {
    await db.insertInto('invitations').values(row).execute();
  },

  /** Pending (not expired at `now`) invitations, newest first. */
  async listPending(db: Db, now: string): Promise<InvitationRow[]> {
    return db
      .selectFrom('invitations')
      .selectAll()
      .where('expires_at', '>', now)
      .orderBy('id', 'desc')
      .execute();
  },

  async findPending(db: Db, tokenHash: string, now: string): Promise<InvitationRow | undefined> {
    return db
      .selectFrom('invitations')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /**
   * Takes the invitation of `tokenHash` if it has not expired at `now`: deletes it and returns it,
   * so two accepts racing each other cannot both get it (one use).
   */
  async take(db: Db, tokenHash: string, now: string): Promise<InvitationRow | undefined> {
    const row = await db
      .deleteFrom('invitations')
      .where('token_hash', '=', tokenHash)
      .returningAll()
      .executeTakeFirst();
    return row && row.expires_at > now ? row : undefined;
  },

  async delete(db: Db, id: string): Promise<boolean> {
    const res = await db.deleteFrom('invitations').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },

  async deleteByEmail(db: Db, email: string): Promise<void> {
    await db.deleteFrom('invitations').where('email', '=', email).execute();
  },

  /** Expired invitations are deleted whenever a new one is made. */
  async deleteExpired(db: Db, now: string): Promise<void> {
    await db.deleteFrom('invitations').where('expires_at', '<=', now).execute();
  },
};
