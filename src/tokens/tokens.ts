/**
 * API tokens: `hf_` + 32 random bytes. Only the sha256 of a token is stored, so a leaked database
 * leaks no usable token; sha256 (not a slow hash) is right here because the token has 256 bits of
 * entropy, and lookups happen on every API call.
 *
 * A token belongs to a member and acts with its own role, capped at every call by the member's
 * current one (SPEC 11b): demoting a member demotes their tokens at once, removing the member
 * deletes them. Tokens of `hookflow tokens create` have no member: they are the owner's, whoever
 * that is.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId, nowIso, type Page, toPage } from '../ids.js';
import { lowerOf, type Role } from '../shared/roles.js';
import type { ApiTokenRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { tokensRepo } from '../store/tokens.js';
import { type Audit, record, SYSTEM } from '../audit/audit.js';

export interface ApiToken {
  id: string;
  name: string;
  prefix: string;
  /** The role it was made with (it never acts above its member's current role). */
  role: Role;
  /** The member it belongs to; null for the owner's tokens made by `hookflow tokens create`. */
  memberId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A verified token and the role it acts with now. */
export interface VerifiedToken {
  apiToken: ApiToken;
  role: Role;
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');
// Writing last_used_at on every call would turn reads into writes; once a minute is enough to show use.
const TOUCH_EVERY_MS = 60_000;

const toApi = (row: ApiTokenRow): ApiToken => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  role: row.role,
  memberId: row.user_id,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

export class TokenService {
  readonly #store: Store;

  constructor({ store }: { store: Store }) {
    this.#store = store;
  }

  /**
   * A new token. Without `owner`, the owner's (the CLI's); the caller checks that `role` is not
   * above the member's own.
   */
  async create(
    name: string,
    owner: { memberId: string | null; role: Role } = { memberId: null, role: 'owner' },
    audit: Audit = SYSTEM,
  ): Promise<{ token: string; apiToken: ApiToken }> {
    const token = `hf_${randomBytes(32).toString('base64url')}`;
    const row: ApiTokenRow = {
      id: newId(),
      name,
      token_hash: hash(token),
      prefix: token.slice(0, 8),
      created_at: nowIso(),
      last_used_at: null,
      user_id: owner.memberId,
      role: owner.role,
    };
    await this.#store.transaction(async (trx) => {
      await tokensRepo.insert(trx, row);
      await record(trx, audit, {
        action: 'token.create',
        target: { type: 'token', id: row.id, name: row.name },
        details: { role: row.role, prefix: row.prefix },
      });
    });
    return { token, apiToken: toApi(row) };
  }

  /** The token's record and the role it acts with, or undefined when it is unknown or revoked. */
  async verify(token: string): Promise<VerifiedToken | undefined> {
    if (!token.startsWith('hf_') || token.length > 128) return undefined;
    const row = await tokensRepo.findWithMember(this.#store.db, hash(token));
    if (!row) return undefined;
    // A member's tokens are deleted with the member; one whose member is gone anyway is refused.
    if (row.user_id !== null && !row.member_exists) return undefined;
    const now = Date.now();
    if (!row.last_used_at || now - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) {
      await tokensRepo.touch(this.#store.db, row.id, new Date(now).toISOString());
    }
    return { apiToken: toApi(row), role: lowerOf(row.role, row.member_role ?? 'owner') };
  }

  /** Newest first; only `memberId`'s tokens when given (null: the owner's CLI tokens). */
  async list(limit: number, before: string | undefined, memberId?: string | null): Promise<Page<ApiToken>> {
    const rows = await tokensRepo.list(this.#store.db, {
      limit: limit + 1,
      before,
      ...(memberId === undefined ? {} : { userId: memberId }),
    });
    return toPage(rows, limit, toApi);
  }

  async get(id: string): Promise<ApiToken | undefined> {
    const row = await tokensRepo.get(this.#store.db, id);
    return row && toApi(row);
  }

  async revoke(id: string, audit: Audit = SYSTEM): Promise<void> {
    await this.#store.transaction(async (trx) => {
      const row = await tokensRepo.get(trx, id);
      if (!row || !(await tokensRepo.delete(trx, id))) throw tokenNotFound(id);
      await record(trx, audit, { action: 'token.revoke', target: { type: 'token', id, name: row.name } });
    });
  }
}

export const tokenNotFound = (id: string) =>
  new AppError('not_found', `There is no API token with id ${id}.`, {
    hint: 'List tokens with GET /api/v1/tokens to see their ids.',
  });
