/**
 * Failed sign-in throttling: failures are counted per key (an account's email, a
 * client address); after `freeFailures` of them each further failure blocks the key for twice as
 * long as the one before (1 s, 2 s, 4 s … capped), so `Retry-After` grows instead of a fixed
 * lockout. A key is forgotten `forgetAfterMs` after its last failure, or on a successful sign-in.
 *
 * Hand-written rather than a rate-limit library: what is needed is a failure counter with
 * exponential backoff and an eviction rule that keeps blocked keys (below), not a request-rate
 * window. In memory, per process: a distributed deployment throttles per process (see
 * docs/scaling.md); the numbers still cap a guesser at a few attempts an hour per process.
 */

export interface ThrottleOptions {
  /** Failures allowed before the first block. */
  freeFailures: number;
  /** The first block; each further failure doubles it. */
  baseBlockMs: number;
  maxBlockMs: number;
  /** A key with no failure for this long starts again from zero. */
  forgetAfterMs: number;
  /** Keys kept at most; past it the oldest key that is not blocked goes first. */
  maxKeys: number;
  now?: () => number;
}

interface Entry {
  failures: number;
  lastFailure: number;
  blockedUntil: number;
}

export class FailureThrottle {
  readonly #o: Required<ThrottleOptions>;
  // Map keeps insertion order; a key is re-inserted on each failure, so the first keys are the oldest.
  readonly #entries = new Map<string, Entry>();

  constructor(options: ThrottleOptions) {
    this.#o = { now: Date.now, ...options };
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Milliseconds until this key may try again (0: now). */
  blockedFor(key: string): number {
    const entry = this.#live(key);
    return entry ? Math.max(0, entry.blockedUntil - this.#o.now()) : 0;
  }

  /** Counts a failure; returns how long the key is now blocked (0: not yet). */
  fail(key: string): number {
    const now = this.#o.now();
    const entry = this.#live(key) ?? { failures: 0, lastFailure: now, blockedUntil: 0 };
    entry.failures++;
    this.#block(entry, now);
    this.#entries.delete(key);
    if (this.#entries.size >= this.#o.maxKeys) this.#evict(now);
    this.#entries.set(key, entry);
    return Math.max(0, entry.blockedUntil - now);
  }

  /**
   * Starts the key's current block again from now. A failure counted before a slow check (see
   * accounts.ts) is confirmed with this when the answer goes out, so Retry-After counts from the
   * answer, not from when the attempt began.
   */
  restart(key: string): void {
    const entry = this.#live(key);
    if (entry) this.#block(entry, this.#o.now());
  }

  /** Undoes one fail() (an attempt counted before it was known to succeed). */
  takeBack(key: string): void {
    const entry = this.#live(key);
    if (!entry) return;
    entry.failures--;
    if (entry.failures <= 0) this.#entries.delete(key);
    else if (entry.failures < this.#o.freeFailures) entry.blockedUntil = 0;
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }

  #block(entry: Entry, now: number): void {
    entry.lastFailure = now;
    const over = entry.failures - this.#o.freeFailures;
    // 2 ** 30 already exceeds any cap: keeps the power finite after many failures.
    if (over >= 0) {
      entry.blockedUntil = now + Math.min(this.#o.maxBlockMs, this.#o.baseBlockMs * 2 ** Math.min(over, 30));
    }
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && this.#o.now() - entry.lastFailure > this.#o.forgetAfterMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * Makes room for one key. Clearing everything (as this code once did past 10k keys) gave every
   * guesser fresh attempts; dropping the oldest key would let a flood of one-off failures push out
   * the account under attack. So: the oldest key that is not blocked, else the oldest key. The scan
   * stops at the first such key; it only walks over blocked keys, which cost a guesser a failure
   * streak each.
   */
  #evict(now: number): void {
    let oldest: string | undefined;
    for (const [key, entry] of this.#entries) {
      oldest ??= key;
      if (entry.blockedUntil <= now) {
        this.#entries.delete(key);
        return;
      }
    }
    if (oldest !== undefined) this.#entries.delete(oldest);
  }
}

/**
 * The key of a client address: IPv4 as is, IPv6 by its /64 (one subscriber usually holds a whole
 * /64, so single IPv6 addresses would give a guesser 2^64 fresh counters).
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(':')) return ip;
  const bare = ip.split('%')[0]!;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const first = groups(head ?? '');
  const last = tail === undefined ? [] : groups(tail);
  const all =
    tail === undefined
      ? first
      : [...first, ...Array(Math.max(0, 8 - first.length - last.length)).fill('0'), ...last];
  return `${all
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
