/**
 * UI accounts (SPEC 11): the first start asks for an owner account, with a one-time setup code
 * (setup-codes.ts); people then sign in with a session cookie. API tokens stay the way for
 * scripts. Sessions are stored hashed and carry a CSRF token that every cookie-authenticated write
 * must echo in `X-CSRF-Token`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { record } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { sessionsRepo } from '../store/sessions.js';
import type { Store } from '../store/store.js';
import { usersRepo } from '../store/users.js';
import type { Role } from '../shared/roles.js';
import { invitationsRepo } from '../store/invitations.js';
import { ACCOUNTS_LOCK, alreadyMember, Members } from './members.js';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './passwords.js';
import { checkPassword, normalizeEmail } from './rules.js';
import { SETUP_CODE_TTL_MS, SetupCodes } from './setup-codes.js';
import { addressKey, FailureThrottle } from './throttle.js';

export const SESSION_COOKIE = 'hookflow_session';
export const SESSION_DAYS = 14;

export interface User {
  id: string;
  email: string;
  role: Role;
}

export interface Session {
  user: User;
  csrfToken: string;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Failed sign-ins are counted per account, whatever address they come from (5 free,
 * then 1 s, 2 s, 4 s … up to 15 minutes per further failure: about 4 guesses an hour once capped),
 * and per client address across accounts (20 free, so a few people behind one NAT are not blocked
 * by each other's typos; it slows one address spraying many emails). While either is blocked,
 * every attempt answers 429 with Retry-After, a correct password included: otherwise a guesser
 * would just keep guessing and watch for the 200. The price is that someone can keep an account's
 * sign-in blocked for up to 15 minutes at a time; signed-in sessions and API tokens keep working.
 * Unknown emails are counted like real ones, so a 429 does not tell which emails exist.
 */
const ACCOUNT_THROTTLE = {
  freeFailures: 5,
  baseBlockMs: 1_000,
  maxBlockMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxKeys: 10_000,
};
const ADDRESS_THROTTLE = { ...ACCOUNT_THROTTLE, freeFailures: 20 };
/**
 * Wrong or missing setup codes, per client address: 5 free (a mistyped paste or two), then the
 * same doubling waits as sign-in. A code has 128 random bits, so this is not what keeps it from
 * being guessed; it keeps one address from making the server hash and compare without end.
 */
const SETUP_THROTTLE = ACCOUNT_THROTTLE;

const invitationNotFound = () =>
  new AppError('invitation_not_found', 'This invitation link is unknown, was already used, or has expired.', {
    hint: 'Ask an owner or admin of this hookflow for a new invitation; a link works once, for 7 days.',
  });

const setupDone = () =>
  new AppError('setup_done', 'An owner account already exists.', { hint: 'Sign in instead.' });

const setupCodeRequired = (given: string | undefined) =>
  new AppError(
    'setup_code_required',
    given === undefined || given.trim() === ''
      ? 'Creating the owner account needs the setup code this hookflow printed when it started.'
      : 'The setup code is wrong, or has expired.',
    {
      hint: `Open the address hookflow printed when it started ("Create the owner account: …/#setup-code=…"), or run \`hookflow setup-code\` on the server for a new code. A code is valid for ${SETUP_CODE_TTL_MS / 3_600_000} hours.`,
    },
  );

export class Accounts {
  readonly #store: Store;
  readonly #accountFailures: FailureThrottle;
  readonly #addressFailures: FailureThrottle;
  readonly #setupFailures: FailureThrottle;
  readonly #setupCodes: SetupCodes;
  /** Members and invitations (SPEC 11b). */
  readonly members: Members;

  constructor({ store, now }: { store: Store; now?: () => number }) {
    this.#store = store;
    this.members = new Members({ store, ...(now ? { now } : {}) });
    this.#accountFailures = new FailureThrottle(ACCOUNT_THROTTLE);
    this.#addressFailures = new FailureThrottle(ADDRESS_THROTTLE);
    this.#setupFailures = new FailureThrottle({ ...SETUP_THROTTLE, ...(now ? { now } : {}) });
    this.#setupCodes = new SetupCodes({ store, now });
  }

  async setupRequired(): Promise<boolean> {
    return !(await usersRepo.any(this.#store.db));
  }

  /**
   * A new setup code (printed on start and by `hookflow setup-code`); undefined once the owner exists.
   */
  issueSetupCode(): Promise<string | undefined> {
    return this.#setupCodes.issue();
  }

  /**
   * Create the owner account; only while there is no account at all, and only with a valid setup
   * code. Both are checked before the password is hashed, so a call without the code, or once the
   * owner exists, costs a read or two rather than a ~100 ms scrypt anyone could ask for. The checks inside the transaction, under the accounts lock, still decide between two
   * setups racing each other; the one that creates the owner deletes every code with it.
   */
  async setup(
    email: string,
    password: string,
    setupCode: string | undefined,
    address: string,
  ): Promise<{ user: User; cookie: string; session: Session }> {
    if (!(await this.setupRequired())) throw setupDone();
    const from = `address:${addressKey(address)}`;
    this.#checkSetupThrottle(from);
    // Counted before the check and taken back when the code is right, as sign-in does: a burst of
    // parallel guesses must not all pass the throttle above at once.
    this.#setupFailures.fail(from);
    if (!(await this.#setupCodes.matches(this.#store.db, setupCode))) {
      this.#setupFailures.restart(from);
      throw setupCodeRequired(setupCode);
    }
    this.#setupFailures.takeBack(from);
    const normalized = normalizeEmail(email);
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    const user: User = { id: newId(), email: normalized, role: 'owner' };
    await this.#store.transaction(
      async (trx) => {
        if (await usersRepo.any(trx)) throw setupDone();
        // Expired since the check above (a 24 h edge): refused like any other stale code.
        if (!(await this.#setupCodes.matches(trx, setupCode))) throw setupCodeRequired(setupCode);
        await usersRepo.insert(trx, {
          id: user.id,
          email: user.email,
          password_hash: passwordHash,
          role: 'owner',
          created_at: new Date().toISOString(),
        });
        await this.#setupCodes.consumeAll(trx);
        await record(
          trx,
          { actor: { type: 'user', id: user.id, name: user.email }, ip: address },
          {
            action: 'member.join',
            target: { type: 'member', id: user.id, name: user.email },
            details: { role: 'owner' },
          },
        );
      },
      { lock: ACCOUNTS_LOCK },
    );
    return { user, ...(await this.#startSession(user)) };
  }

  /**
   * Accepts an invitation (SPEC 11b): makes the account with the invited email and role, and
   * signs the person in. The password is checked and hashed first; the invitation is then taken in
   * the transaction that makes the account, so it works once. An unknown, used, revoked or
   * expired token is one answer (404 invitation_not_found): the answer tells nothing of tokens.
   */
  async acceptInvitation(
    token: string,
    password: string,
    address: string | null = null,
  ): Promise<{ user: User; cookie: string; session: Session }> {
    checkPassword(password);
    const tokenHash = sha256(token);
    const now = new Date().toISOString();
    // Cheap refusal before the ~100 ms hash (a random token costs nobody a scrypt).
    if (token.length > 128 || !(await invitationsRepo.findPending(this.#store.db, tokenHash, now))) {
      throw invitationNotFound();
    }
    const passwordHash = await hashPassword(password);
    const user = await this.#store.transaction(
      async (trx) => {
        const invitation = await invitationsRepo.take(trx, tokenHash, new Date().toISOString());
        if (!invitation) throw invitationNotFound();
        if (await usersRepo.findByEmail(trx, invitation.email)) throw alreadyMember(invitation.email);
        const made: User = { id: newId(), email: invitation.email, role: invitation.role };
        await usersRepo.insert(trx, {
          id: made.id,
          email: made.email,
          password_hash: passwordHash,
          role: made.role,
          created_at: new Date().toISOString(),
        });
        await record(
          trx,
          { actor: { type: 'user', id: made.id, name: made.email }, ip: address },
          {
            action: 'member.join',
            target: { type: 'member', id: made.id, name: made.email },
            details: { role: made.role },
          },
        );
        return made;
      },
      { lock: ACCOUNTS_LOCK },
    );
    return { user, ...(await this.#startSession(user)) };
  }

  async login(
    email: string,
    password: string,
    address: string,
  ): Promise<{ user: User; cookie: string; session: Session }> {
    const normalized = email.trim().toLowerCase();
    const account = `account:${normalized}`;
    const from = `address:${addressKey(address)}`;
    this.#checkThrottle(account, from);
    // Counted as failures before the ~100 ms check, and taken back if the password is right:
    // counted afterwards, a burst of parallel guesses would all pass the check above at once.
    this.#accountFailures.fail(account);
    this.#addressFailures.fail(from);
    const row = await usersRepo.findByEmail(this.#store.db, normalized);
    const ok = await verifyPassword(password, row?.password_hash ?? (await DUMMY_HASH_PROMISE));
    if (!row || !ok) {
      this.#accountFailures.restart(account);
      this.#addressFailures.restart(from);
      await record(
        this.#store.db,
        { actor: { type: 'user', id: row?.id ?? null, name: normalized }, ip: address },
        { action: 'auth.sign_in_failed', target: { type: 'member', id: row?.id ?? null, name: normalized } },
      );
      throw new AppError('unauthorized', 'The email or password is wrong.', {
        hint: 'Check both and try again; after 5 failed attempts each further one makes you wait longer.',
      });
    }
    // The address keeps its earlier failures: signing in to one's own account must not reset a
    // spray of guesses at others.
    this.#accountFailures.forget(account);
    this.#addressFailures.takeBack(from);
    const user: User = { id: row.id, email: row.email, role: row.role };
    const started = await this.#startSession(user);
    await record(
      this.#store.db,
      { actor: { type: 'user', id: user.id, name: user.email }, ip: address },
      { action: 'auth.sign_in', target: { type: 'member', id: user.id, name: user.email } },
    );
    return { user, ...started };
  }

  /** The session of a cookie value, or undefined when unknown or expired. */
  async session(cookie: string | undefined): Promise<Session | undefined> {
    if (!cookie || cookie.length > 128) return undefined;
    const row = await sessionsRepo.get(this.#store.db, sha256(cookie));
    if (!row || Date.parse(row.expires_at) <= Date.now()) return undefined;
    return { user: { id: row.user_id, email: row.email, role: row.role }, csrfToken: row.csrf_token };
  }

  async logout(cookie: string | undefined): Promise<void> {
    if (!cookie) return;
    await sessionsRepo.delete(this.#store.db, sha256(cookie));
  }

  async #startSession(user: User): Promise<{ cookie: string; session: Session }> {
    const cookie = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    const now = new Date();
    await sessionsRepo.deleteExpired(this.#store.db, now.toISOString());
    await sessionsRepo.insert(this.#store.db, {
      id: sha256(cookie),
      user_id: user.id,
      csrf_token: csrfToken,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + SESSION_DAYS * 86_400_000).toISOString(),
    });
    return { cookie, session: { user, csrfToken } };
  }

  /** 429 while the address is blocked after wrong setup codes (checked before the code is). */
  #checkSetupThrottle(from: string): void {
    const ms = this.#setupFailures.blockedFor(from);
    if (ms === 0) return;
    const seconds = Math.ceil(ms / 1000);
    throw new AppError('rate_limited', 'Too many attempts with a wrong setup code.', {
      hint: `Wait ${seconds} second(s) and try again with the code hookflow printed; each further failure doubles the wait (up to 15 minutes).`,
      headers: { 'retry-after': String(seconds) },
    });
  }

  /** 429 while the account or the address is blocked (checked before the password is). */
  #checkThrottle(account: string, from: string): void {
    const ms = Math.max(this.#accountFailures.blockedFor(account), this.#addressFailures.blockedFor(from));
    if (ms === 0) return;
    const seconds = Math.ceil(ms / 1000);
    throw new AppError('rate_limited', 'Too many failed sign-in attempts.', {
      hint: `Wait ${seconds} second(s) and try again; each further failure doubles the wait (up to 15 minutes).`,
      headers: { 'retry-after': String(seconds) },
    });
  }
}
