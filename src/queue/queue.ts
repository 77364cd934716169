/**
 * The executions table is the job queue (SPEC 10): a request and its queued execution are written
 * in one transaction, so there is no second system to lose jobs between. Workers claim due rows
 * under a lease; a worker that dies leaves rows whose lease lapses, and they are claimed again
 * with attempt + 1 (at-least-once). On PostgreSQL the claim uses FOR UPDATE SKIP LOCKED so many
 * workers never block on or double-claim a row (graphile-worker's getJobs); SQLite has a single
 * writer, so the same UPDATE … RETURNING is already exclusive.
 */
import { sql } from 'kysely';
import type { ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

/** A lease is renewed every LEASE_MS / 3 while the execution runs; 30 s lets a busy event loop be late twice. */
export const LEASE_MS = 30_000;

export interface ExecutionResult {
  status: 'succeeded' | 'failed' | 'filtered';
  steps: unknown[];
  error: unknown;
}

export class Queue {
  readonly #store: Store;
  readonly #workerId: string;

  constructor({ store, workerId }: { store: Store; workerId: string }) {
    this.#store = store;
    this.#workerId = workerId;
  }

  /** Claim up to `limit` due executions: queued ones, and running ones whose worker's lease lapsed. */
  async claim(limit: number): Promise<ExecutionRow[]> {
    const now = new Date();
    const nowIso = now.toISOString();
    const until = new Date(now.getTime() + LEASE_MS).toISOString();
    const db = this.#store.db;
    let due = db
      .selectFrom('executions')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb('run_after', '<=', nowIso)]),
          eb.and([eb('status', '=', 'running'), eb('locked_until', '<', nowIso)]),
        ]),
      )
      .orderBy('id')
      .limit(limit);
    if (this.#store.caps.skipLocked) due = due.forUpdate().skipLocked();
    const rows = await db
      .updateTable('executions')
      .set({
        // A lapsed running row is a crashed attempt: this claim is the next attempt.
        attempt: sql<number>`case when status = 'running' then attempt + 1 else attempt end`,
        status: 'running',
        locked_by: this.#workerId,
        locked_until: until,
        started_at: nowIso,
      })
      .where('id', 'in', due)
      .returningAll()
      .execute();
    // RETURNING comes back in the update's plan order (on PostgreSQL often not the subquery's
    // ORDER BY), so restore oldest first here: ids are time-ordered UUIDv7.
    return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Extend the lease of executions this worker is still running. */
  async heartbeat(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#store.db
      .updateTable('executions')
      .set({ locked_until: new Date(Date.now() + LEASE_MS).toISOString() })
      .where('id', 'in', ids)
      .where('locked_by', '=', this.#workerId)
      .execute();
  }

  async complete(id: string, result: ExecutionResult): Promise<void> {
    await this.#store.db
      .updateTable('executions')
      .set({
        status: result.status,
        steps: JSON.stringify(result.steps),
        error: result.error === undefined || result.error === null ? null : JSON.stringify(result.error),
        finished_at: new Date().toISOString(),
        locked_by: null,
        locked_until: null,
      })
      .where('id', '=', id)
      .execute();
  }

  /**
   * On start of a process that owns the whole store (embedded SQLite), every `running` row belongs
   * to a process that is gone: make them claimable now instead of after their lease.
   */
  async releaseAbandoned(): Promise<number> {
    const res = await this.#store.db
      .updateTable('executions')
      .set({ locked_until: new Date(0).toISOString() })
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }
}
