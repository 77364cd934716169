/**
 * API tokens: `hf_` + 32 random bytes. Only the sha256 of a token is stored, so a leaked database
 * leaks no usable token; sha256 (not a slow hash) is right here because the token has 256 bits of
 * entropy, and lookups happen on every API call.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId, nowIso, type Page, toPage } from '../ids.js';
import type { ApiTokenRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { tokensRepo } from '../store/tokens.js';

export interface ApiToken {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');
// Writing last_used_at on every call would turn reads into writes; once a minute is enough to show use.
const TOUCH_EVERY_MS = 60_000;

const toApi = (row: ApiTokenRow): ApiToken => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

export class TokenService {
  readonly #store: Store;

  constructor({ store }: { store: Store }) {
    this.#store = store;
  }

  async create(name: string): Promise<{ token: string; apiToken: ApiToken }> {
    const token = `hf_${randomBytes(32).toString('base64url')}`;
    const row: ApiTokenRow = {
      id: newId(),
      name,
      token_hash: hash(token),
      prefix: token.slice(0, 8),
      created_at: nowIso(),
      last_used_at: null,
    };
    await tokensRepo.insert(this.#store.db, row);
    return { token, apiToken: toApi(row) };
  }

  /** The token's record, or undefined when it is unknown or revoked. */
  async verify(token: string): Promise<ApiToken | undefined> {
    if (!token.startsWith('hf_') || token.length > 128) return undefined;
    const row = await tokensRepo.findByHash(this.#store.db, hash(token));
    if (!row) return undefined;
    const now = Date.now();
    if (!row.last_used_at || now - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) {
      await tokensRepo.touch(this.#store.db, row.id, new Date(now).toISOString());
    }
    return toApi(row);
  }

  async list(limit: number, before: string | undefined): Promise<Page<ApiToken>> {
    const rows = await tokensRepo.list(this.#store.db, { limit: limit + 1, before });
    return toPage(rows, limit, toApi);
  }

  async revoke(id: string): Promise<void> {
    if (!(await tokensRepo.delete(this.#store.db, id))) {
      throw new AppError('not_found', `There is no API token with id ${id}.`, {
        hint: 'List tokens with GET /api/v1/tokens to see their ids.',
      });
    }
  }
}
