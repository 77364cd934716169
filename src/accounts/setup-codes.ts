/**
 * First-start setup codes (SPEC 11). Until the owner account exists, creating it needs a one-time
 * code that only the operator sees: each process that starts without an owner prints one, and
 * `hookflow setup-code` prints a new one. Without it, anyone who reached the port first would
 * become the owner, also of an installation already driven by scripts with API tokens.
 *
 * - A code is 128 random bits as 32 hex digits (URL-safe, case does not matter when typed).
 * - Only its sha256 is stored, in the store, so a code printed by one process is accepted by any
 *   other on the same database. sha256 rather than a slow hash: 128 random bits cannot be guessed
 *   from their hash, and the check stays cheap enough to throttle per address instead.
 * - Several codes are valid at once, each for 24 hours: the code a start printed must keep working
 *   after `hookflow setup-code` (or another process's start) printed a newer one. At most the 50
 *   newest are kept, so a command run in a loop cannot grow the table.
 * - A code is single-use: when the owner is created, every code is deleted in the same transaction.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { setupCodesRepo } from '../store/setup-codes.js';
import type { Db, Store } from '../store/store.js';
import { usersRepo } from '../store/users.js';

export const SETUP_CODE_TTL_MS = 24 * 60 * 60_000;
const KEEP = 50;
/** Longer input is refused without hashing it (a code has 32 characters). */
const MAX_LENGTH = 256;

const sha256 = (s: string) => createHash('sha256').update(s).digest();
/** The form a code is hashed in: pasted codes may carry spaces or capitals. */
const normalize = (code: string) => code.trim().toLowerCase();

export class SetupCodes {
  readonly #store: Store;
  readonly #now: () => number;

  constructor({ store, now = Date.now }: { store: Store; now?: (() => number) | undefined }) {
    this.#store = store;
    this.#now = now;
  }

  /**
   * A new code, stored hashed beside the valid ones; undefined when the owner already exists (the
   * codes left over, if any, are deleted then). Under the accounts lock, so a code is never stored
   * after the owner was created.
   */
  async issue(): Promise<string | undefined> {
    const code = randomBytes(16).toString('hex');
    const now = this.#now();
    return this.#store.transaction(
      async (trx) => {
        if (await usersRepo.any(trx)) {
          await setupCodesRepo.deleteAll(trx);
          return undefined;
        }
        await setupCodesRepo.insert(trx, {
          code_hash: sha256(code).toString('hex'),
          created_at: new Date(now).toISOString(),
          expires_at: new Date(now + SETUP_CODE_TTL_MS).toISOString(),
        });
        await setupCodesRepo.prune(trx, new Date(now).toISOString(), KEEP);
        return code;
      },
      { lock: 'hookflow:accounts' },
    );
  }

  /**
   * Whether `code` is one of the valid codes. Each stored hash is compared in constant time, and
   * all of them every time, so neither a match nor its position shows in the timing.
   */
  async matches(db: Db, code: string | undefined): Promise<boolean> {
    if (typeof code !== 'string' || code.length > MAX_LENGTH) return false;
    const given = sha256(normalize(code));
    const stored = await setupCodesRepo.valid(db, new Date(this.#now()).toISOString(), KEEP);
    let found = false;
    for (const hash of stored) {
      const candidate = Buffer.from(hash, 'hex');
      if (candidate.length === given.length && timingSafeEqual(candidate, given)) found = true;
    }
    return found;
  }

  /** Deletes every code: called in the transaction that creates the owner. */
  async consumeAll(db: Db): Promise<void> {
    await setupCodesRepo.deleteAll(db);
  }
}
