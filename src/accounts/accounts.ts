/**
 * UI accounts (SPEC 11): the first start asks for an owner account; people then sign in with a
 * session cookie. API tokens stay the way for scripts. Sessions are stored hashed and carry a
 * CSRF token that every cookie-authenticated write must echo in `X-CSRF-Token`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Store } from '../store/store.js';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './passwords.js';

export const SESSION_COOKIE = 'hookflow_session';
export const SESSION_DAYS = 14;

export interface User {
  id: string;
  email: string;
  role: 'owner' | 'member';
}

export interface Session {
  user: User;
  csrfToken: string;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Failed sign-ins per email+address: 5 within 15 minutes, then wait (bounded map: at most 10k keys). */
const MAX_FAILURES = 5;
const FAILURE_WINDOW_MS = 15 * 60_000;

export class Accounts {
  readonly #store: Store;
  readonly #failures = new Map<string, { count: number; first: number }>();

  constructor({ store }: { store: Store }) {
    this.#store = store;
  }

  async setupRequired(): Promise<boolean> {
    const row = await this.#store.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
    return row === undefined;
  }

  /** Create the owner account; only while there is no account at all. */
  async setup(email: string, password: string): Promise<{ user: User; cookie: string; session: Session }> {
    const normalized = normalizeEmail(email);
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    const user: User = { id: newId(), email: normalized, role: 'owner' };
    await this.#store.transaction(
      async (trx) => {
        const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
        if (existing) {
          throw new AppError('setup_done', 'An owner account already exists.', { hint: 'Sign in instead.' });
        }
        await trx
          .insertInto('users')
          .values({
            id: user.id,
            email: user.email,
            password_hash: passwordHash,
            role: 'owner',
            created_at: new Date().toISOString(),
          })
          .execute();
      },
      { lock: 'hookflow:accounts' },
    );
    return { user, ...(await this.#startSession(user)) };
  }

  async login(
    email: string,
    password: string,
    address: string,
  ): Promise<{ user: User; cookie: string; session: Session }> {
    const normalized = email.trim().toLowerCase();
    const key = `${normalized}|${address}`;
    this.#checkThrottle(key);
    const row = await this.#store.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', normalized)
      .executeTakeFirst();
    const ok = await verifyPassword(password, row?.password_hash ?? (await DUMMY_HASH_PROMISE));
    if (!row || !ok) {
      this.#recordFailure(key);
      throw new AppError('unauthorized', 'The email or password is wrong.', {
        hint: 'Check both and try again; after 5 failed attempts, wait 15 minutes.',
      });
    }
    this.#failures.delete(key);
    const user: User = { id: row.id, email: row.email, role: row.role };
    return { user, ...(await this.#startSession(user)) };
  }

  /** The session of a cookie value, or undefined when unknown or expired. */
  async session(cookie: string | undefined): Promise<Session | undefined> {
    if (!cookie || cookie.length > 128) return undefined;
    const row = await this.#store.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select([
        'users.id as user_id',
        'users.email',
        'users.role',
        'sessions.csrf_token',
        'sessions.expires_at',
      ])
      .where('sessions.id', '=', sha256(cookie))
      .executeTakeFirst();
    if (!row || Date.parse(row.expires_at) <= Date.now()) return undefined;
    return { user: { id: row.user_id, email: row.email, role: row.role }, csrfToken: row.csrf_token };
  }

  async logout(cookie: string | undefined): Promise<void> {
    if (!cookie) return;
    await this.#store.db.deleteFrom('sessions').where('id', '=', sha256(cookie)).execute();
  }

  async #startSession(user: User): Promise<{ cookie: string; session: Session }> {
    const cookie = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    const now = new Date();
    await this.#store.db.deleteFrom('sessions').where('expires_at', '<', now.toISOString()).execute();
    await this.#store.db
      .insertInto('sessions')
      .values({
        id: sha256(cookie),
        user_id: user.id,
        csrf_token: csrfToken,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + SESSION_DAYS * 86_400_000).toISOString(),
      })
      .execute();
    return { cookie, session: { user, csrfToken } };
  }

  #checkThrottle(key: string): void {
    const entry = this.#failures.get(key);
    if (!entry) return;
    const age = Date.now() - entry.first;
    if (age > FAILURE_WINDOW_MS) {
      this.#failures.delete(key);
      return;
    }
    if (entry.count >= MAX_FAILURES) {
      const seconds = Math.ceil((FAILURE_WINDOW_MS - age) / 1000);
      throw new AppError('rate_limited', 'Too many failed sign-in attempts.', {
        hint: `Wait ${Math.ceil(seconds / 60)} minute(s) and try again.`,
        headers: { 'retry-after': String(seconds) },
      });
    }
  }

  #recordFailure(key: string): void {
    if (this.#failures.size > 10_000) this.#failures.clear();
    const entry = this.#failures.get(key);
    if (entry) entry.count++;
    else this.#failures.set(key, { count: 1, first: Date.now() });
  }
}

function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(e) || e.length > 254) {
    throw new AppError('validation_failed', 'The email address is not valid.', {
      fields: [{ field: '/email', message: 'must be an email address' }],
      hint: 'Use an address like you@example.com.',
    });
  }
  return e;
}

function checkPassword(password: string): void {
  if (password.length < 8 || password.length > 1024) {
    throw new AppError('validation_failed', 'The password must have 8 to 1024 characters.', {
      fields: [{ field: '/password', message: 'must have 8 to 1024 characters' }],
      hint: 'Choose a longer password; a phrase of several words works well.',
    });
  }
}
