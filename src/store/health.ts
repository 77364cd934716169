/**
 * Whether the store takes writes, as the writes themselves show it (SPEC 3.5). A write that fails
 * because the store is out of service (unavailable.ts) starts an outage: logged once, at error,
 * with the cause; `/readyz` answers 503 from then on. The next write that succeeds ends it: logged
 * once, at info, with its length. In between, the failing requests each get their 503 but add
 * nothing to the log, so a full disk under 5 000 req/s is two log lines, not 5 000 stack traces.
 *
 * A process that a load balancer has taken out of rotation (because of this 503) gets no more
 * writes to prove it recovered, so `/readyz` itself tries a small write (`probe`) while the store
 * is out — but only once no real write has failed for PROBE_QUIET_MS (with traffic, the traffic
 * is the probe: a tiny probe write can fit where requests' batches do not, and flapping ready
 * would send the traffic back to fail again) and at most once per PROBE_QUIET_MS.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Store } from './store.js';
import { isStoreUnavailable } from './unavailable.js';

/** Quiet time after a failed write before `/readyz` tries a write of its own. */
const PROBE_QUIET_MS = 2_000;

/** The probe's file row (never seen outside its transaction); real ids are random. */
const PROBE_ID = 'hookflow-store-probe';
const PROBE_BYTES = 64 * 1024;

interface Outage {
  since: number;
  /** When a write last failed (real or probe). */
  lastFailure: number;
  /** When /readyz last tried a write. */
  lastProbe: number;
  cause: unknown;
}

export class StoreHealth {
  readonly #log: Logger;
  readonly #probe: () => Promise<void>;
  #outage: Outage | undefined;
  #probing: Promise<boolean> | undefined;

  constructor({ store, log, probe }: { store: Store; log: Logger; probe?: () => Promise<void> }) {
    this.#log = log;
    this.#probe = probe ?? (() => probeWrite(store));
  }

  /** False from a write the store could not take until one it took. */
  get available(): boolean {
    return this.#outage === undefined;
  }

  /** What the outage's first failed write said, while there is one. */
  get cause(): unknown {
    return this.#outage?.cause;
  }

  /** A write failed with `err`; returns whether that means the store is out of service (now recorded). */
  failed(err: unknown): boolean {
    if (!isStoreUnavailable(err)) return false;
    const now = Date.now();
    if (this.#outage) {
      this.#outage.lastFailure = now;
      return true;
    }
    // The database's own error, not the 503 made of it.
    const cause = err instanceof AppError && err.cause !== undefined ? err.cause : err;
    this.#outage = { since: now, lastFailure: now, lastProbe: 0, cause };
    this.#log.error(
      { err: cause },
      'the store cannot take writes: answering 503 store_unavailable and /readyz 503 until a write succeeds',
    );
    return true;
  }

  /** A write was committed. Cheap when nothing was wrong: it runs once per committed batch. */
  succeeded(): void {
    if (this.#outage === undefined) return;
    const downMs = Date.now() - this.#outage.since;
    this.#outage = undefined;
    this.#log.info({ downMs }, 'the store takes writes again');
  }

  /**
   * For /readyz: whether the store takes writes. While it does not, and no write has failed for a
   * while, tries one (concurrent callers share it).
   */
  async ready(): Promise<boolean> {
    const outage = this.#outage;
    if (!outage) return true;
    const now = Date.now();
    if (now - outage.lastFailure < PROBE_QUIET_MS || now - outage.lastProbe < PROBE_QUIET_MS) return false;
    this.#probing ??= (async () => {
      outage.lastProbe = now;
      try {
        await this.#probe();
        this.succeeded();
        return true;
      } catch (err) {
        // A failure of another kind (a bug in the probe) keeps the outage as it is: not ready.
        this.failed(err);
        return false;
      } finally {
        this.#probing = undefined;
      }
    })();
    return this.#probing;
  }
}

/**
 * A write that needs the database to take a commit with room to spare: a 64 KiB file row inserted
 * and deleted again in one transaction still writes its pages (SQLite: ~17 WAL frames; PostgreSQL:
 * WAL records of the row and its TOAST, and the commit). The size is a margin: a few bytes could fit
 * in a WAL file a failed batch left longer than its last frame, and say ready while requests fail.
 * Random bytes, so that PostgreSQL cannot compress them away. Through `store.transaction`, like
 * the API's and ingest's other writes.
 */
export async function probeWrite(store: Store): Promise<void> {
  await store.transaction(async (trx) => {
    await trx
      .insertInto('blobs')
      .values({
        id: PROBE_ID,
        execution_id: null,
        sha256: '',
        size: PROBE_BYTES,
        mime_type: 'application/octet-stream',
        filename: 'store-probe',
        data: randomBytes(PROBE_BYTES),
        created_at: new Date().toISOString(),
      })
      .execute();
    await trx.deleteFrom('blobs').where('id', '=', PROBE_ID).execute();
  });
}
