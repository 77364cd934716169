/**
 * The executions table is the job queue (SPEC 10): a request and its queued execution are written
 * in one transaction, so there is no second system to lose jobs between. Workers claim due rows
 * under a lease; a worker that dies leaves rows whose lease lapses, and they are claimed again
 * with attempt + 1 (at-least-once). On PostgreSQL the claim uses FOR UPDATE SKIP LOCKED so many
 * workers never block on or double-claim a row (graphile-worker's getJobs); SQLite has a single
 * writer, so the same UPDATE … RETURNING is already exclusive.
 *
 * Retries are for infrastructure, never for a workflow's own failures: a failing step is data on
 * the execution (status `failed`), recorded once. What is retried is an attempt that could not
 * finish for reasons outside the workflow: its worker died (the lease lapses; the next claim is
 * attempt + 1, at once, since the lease already made it wait) or could not record the result
 * (`retryLater`: queued again with exponential backoff). After MAX_ATTEMPTS such attempts the
 * execution is failed for good, so an execution that kills every worker that runs it stops.
 */
import { sql } from 'kysely';
import type { ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

/**
 * Default lease (HOOKFLOW_LEASE_MS). It is renewed every third of it while the execution runs:
 * 30 s lets a busy event loop be late twice, and is how long a crashed worker's executions wait.
 */
export const LEASE_MS = 30_000;

/** Attempts (crashed or unrecordable) before an execution is failed for good. */
export const MAX_ATTEMPTS = 5;

/**
 * Delay before attempt `attempt + 1` after an infrastructure failure of attempt `attempt`:
 * 2 s, 4 s, 8 s, 16 s (graphile-worker uses exp(attempts) s; webhook work is fresher, so shorter),
 * capped at 5 minutes.
 */
export const backoffMs = (attempt: number): number => Math.min(1_000 * 2 ** attempt, 5 * 60_000);

/** How often a claim also fails executions that used up their attempts (a cheap indexed UPDATE). */
const EXHAUSTED_SWEEP_MS = 5_000;

export interface ExecutionResult {
  status: 'succeeded' | 'failed' | 'filtered';
  steps: unknown[];
  error: unknown;
}

export class Queue {
  readonly #store: Store;
  readonly #workerId: string;
  readonly #leaseMs: number;
  #sweptAt = 0;

  constructor({ store, workerId, leaseMs = LEASE_MS }: { store: Store; workerId: string; leaseMs?: number }) {
    this.#store = store;
    this.#workerId = workerId;
    this.#leaseMs = leaseMs;
  }

  /** The lease of a claim; the worker heartbeats every third of it. */
  get leaseMs(): number {
    return this.#leaseMs;
  }

  /** Claim up to `limit` due executions: queued ones, and running ones whose worker's lease lapsed. */
  async claim(limit: number): Promise<ExecutionRow[]> {
    const now = new Date();
    const nowIso = now.toISOString();
    const until = new Date(now.getTime() + this.#leaseMs).toISOString();
    const db = this.#store.db;
    if (now.getTime() - this.#sweptAt >= EXHAUSTED_SWEEP_MS) {
      this.#sweptAt = now.getTime();
      await this.#failExhausted(nowIso);
    }
    let due = db
      .selectFrom('executions')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb('run_after', '<=', nowIso)]),
          eb.and([
            eb('status', '=', 'running'),
            eb('locked_until', '<', nowIso),
            eb('attempt', '<', MAX_ATTEMPTS),
          ]),
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
      .set({ locked_until: new Date(Date.now() + this.#leaseMs).toISOString() })
      .where('id', 'in', ids)
      .where('locked_by', '=', this.#workerId)
      .execute();
  }

  /**
   * Record the result. Only while this worker still holds the execution: if its lease lapsed
   * (the process stalled past it) and another worker claimed the execution, that worker's attempt
   * is the one recorded. Returns whether this result was recorded.
   */
  async complete(id: string, result: ExecutionResult): Promise<boolean> {
    const res = await this.#store.db
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
      .where('locked_by', '=', this.#workerId)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * An attempt failed for a reason outside the workflow (e.g. its result could not be recorded):
   * queue the execution again as the next attempt after a backoff, or, past MAX_ATTEMPTS, fail
   * it for good with `reason` as its error. Returns the new status.
   */
  async retryLater(id: string, attempt: number, reason: string): Promise<'queued' | 'failed'> {
    const now = Date.now();
    const giveUp = attempt >= MAX_ATTEMPTS;
    await this.#store.db
      .updateTable('executions')
      .set(
        giveUp
          ? {
              status: 'failed',
              error: JSON.stringify({ message: `Gave up after ${attempt} attempts: ${reason}` }),
              finished_at: new Date(now).toISOString(),
              locked_by: null,
              locked_until: null,
            }
          : {
              status: 'queued',
              attempt: attempt + 1,
              steps: '[]',
              error: JSON.stringify({ message: `Attempt ${attempt} could not finish: ${reason}` }),
              run_after: new Date(now + backoffMs(attempt)).toISOString(),
              locked_by: null,
              locked_until: null,
            },
      )
      .where('id', '=', id)
      .where('locked_by', '=', this.#workerId)
      .execute();
    return giveUp ? 'failed' : 'queued';
  }

  /** Running executions whose lease lapsed on their last allowed attempt are failed, not run again. */
  async #failExhausted(nowIso: string): Promise<void> {
    await this.#store.db
      .updateTable('executions')
      .set({
        status: 'failed',
        error: JSON.stringify({
          message: `Gave up after ${MAX_ATTEMPTS} attempts: the worker running it stopped each time (crashed or was killed).`,
        }),
        finished_at: nowIso,
        locked_by: null,
        locked_until: null,
      })
      .where('status', '=', 'running')
      .where('locked_until', '<', nowIso)
      .where('attempt', '>=', MAX_ATTEMPTS)
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
