/**
 * The tokens of `oauth2` credentials and the authorizations in progress (SPEC 7e;
 * credentials/oauth2.ts). Tokens are written by compare-and-set on `version`, and refreshed under
 * a claim (`claim`): a row-level update that only one process can win, on SQLite (one writer) as on
 * PostgreSQL (the row lock of the UPDATE), so two workers never both spend a refresh token.
 */
import type { OAuth2AuthorizationsTable, OAuth2TokensTable } from './schema.js';
import type { Db } from './store.js';

export type OAuth2TokensRow = OAuth2TokensTable;
export type OAuth2AuthorizationRow = OAuth2AuthorizationsTable;

/** What a write of tokens sets (the version is the caller's read plus one). */
export type OAuth2TokensWrite = Pick<
  OAuth2TokensTable,
  'state' | 'tokens' | 'expires_at' | 'refreshed_at' | 'last_error'
>;

export const oauth2Repo = {
  async get(db: Db, credentialId: string): Promise<OAuth2TokensRow | undefined> {
    return db
      .selectFrom('oauth2_tokens')
      .selectAll()
      .where('credential_id', '=', credentialId)
      .executeTakeFirst();
  },

  /** The rows of these credentials that exist (any order). */
  async getMany(db: Db, ids: readonly string[]): Promise<OAuth2TokensRow[]> {
    if (ids.length === 0) return [];
    return db.selectFrom('oauth2_tokens').selectAll().where('credential_id', 'in', ids).execute();
  },

  /** Makes the row of a credential that has none yet (`not_connected`, version 0). */
  async ensure(db: Db, credentialId: string): Promise<void> {
    await db
      .insertInto('oauth2_tokens')
      .values({
        credential_id: credentialId,
        state: 'not_connected',
        tokens: null,
        expires_at: null,
        refreshed_at: null,
        last_error: null,
        version: 0,
        claimed_by: null,
        claim_until: null,
      })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .execute();
  },

  /**
   * Takes the refresh claim of a credential until `until` for `owner`, unless another owner holds
   * one that has not lapsed at `now`. True when this caller holds it now.
   */
  async claim(db: Db, credentialId: string, owner: string, now: string, until: string): Promise<boolean> {
    const res = await db
      .updateTable('oauth2_tokens')
      .set({ claimed_by: owner, claim_until: until })
      .where('credential_id', '=', credentialId)
      .where((eb) =>
        eb.or([eb('claim_until', 'is', null), eb('claim_until', '<=', now), eb('claimed_by', '=', owner)]),
      )
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /** Gives the claim back (when the tokens were not written: nothing to refresh, or it failed). */
  async release(db: Db, credentialId: string, owner: string): Promise<void> {
    await db
      .updateTable('oauth2_tokens')
      .set({ claimed_by: null, claim_until: null })
      .where('credential_id', '=', credentialId)
      .where('claimed_by', '=', owner)
      .execute();
  },

  /**
   * Writes the tokens if the row is still at `version` (nobody wrote since it was read), releasing
   * any claim. False when it was not: the caller reads again.
   */
  async write(db: Db, credentialId: string, version: number, write: OAuth2TokensWrite): Promise<boolean> {
    const res = await db
      .updateTable('oauth2_tokens')
      .set({ ...write, version: version + 1, claimed_by: null, claim_until: null })
      .where('credential_id', '=', credentialId)
      .where('version', '=', version)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /**
   * Sets the tokens whatever the row held (a new connection through the callback), creating the
   * row if there is none; the version grows so that a refresh in progress does not overwrite them.
   */
  async connect(db: Db, credentialId: string, write: OAuth2TokensWrite): Promise<void> {
    await oauth2Repo.ensure(db, credentialId);
    await db
      .updateTable('oauth2_tokens')
      .set((eb) => ({ ...write, version: eb('version', '+', 1) }))
      .where('credential_id', '=', credentialId)
      .execute();
  },

  /** Records an error without touching the tokens (a refresh that failed for a passing reason). */
  async setError(db: Db, credentialId: string, lastError: string): Promise<void> {
    await db
      .updateTable('oauth2_tokens')
      .set({ last_error: lastError })
      .where('credential_id', '=', credentialId)
      .execute();
  },

  /** Forgets the tokens (the credential's settings changed, or it is deleted). */
  async delete(db: Db, credentialId: string): Promise<void> {
    await db.deleteFrom('oauth2_tokens').where('credential_id', '=', credentialId).execute();
    await db.deleteFrom('oauth2_authorizations').where('credential_id', '=', credentialId).execute();
  },

  /** Every row's sealed tokens (`hookflow secrets rotate`). */
  async listSealed(db: Db): Promise<{ credential_id: string; tokens: string }[]> {
    const rows = await db
      .selectFrom('oauth2_tokens')
      .select(['credential_id', 'tokens'])
      .where('tokens', 'is not', null)
      .execute();
    return rows as { credential_id: string; tokens: string }[];
  },

  async setSealed(db: Db, credentialId: string, tokens: string): Promise<void> {
    await db.updateTable('oauth2_tokens').set({ tokens }).where('credential_id', '=', credentialId).execute();
  },

  async insertAuthorization(db: Db, row: OAuth2AuthorizationRow): Promise<void> {
    await db.insertInto('oauth2_authorizations').values(row).execute();
  },

  /**
   * Takes the authorization of `stateHash` if it has not expired at `now`: deletes it and returns
   * it, so the same `state` works once (two callbacks racing cannot both get it).
   */
  async takeAuthorization(
    db: Db,
    stateHash: string,
    now: string,
  ): Promise<OAuth2AuthorizationRow | undefined> {
    const row = await db
      .deleteFrom('oauth2_authorizations')
      .where('state_hash', '=', stateHash)
      .returningAll()
      .executeTakeFirst();
    return row && row.expires_at > now ? row : undefined;
  },

  /** Expired authorizations are deleted whenever a new one starts. */
  async deleteExpiredAuthorizations(db: Db, now: string): Promise<void> {
    await db.deleteFrom('oauth2_authorizations').where('expires_at', '<=', now).execute();
  },

  /** Every pending authorization's sealed verifier (`hookflow secrets rotate`). */
  async listVerifiers(db: Db): Promise<{ state_hash: string; verifier: string }[]> {
    return db.selectFrom('oauth2_authorizations').select(['state_hash', 'verifier']).execute();
  },

  async setVerifier(db: Db, stateHash: string, verifier: string): Promise<void> {
    await db
      .updateTable('oauth2_authorizations')
      .set({ verifier })
      .where('state_hash', '=', stateHash)
      .execute();
  },
};
