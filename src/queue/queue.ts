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
import type { CheckpointWrite } from '../engine/checkpoint.js';
import { isoString } from '../ids.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { stepsJson } from '../store/executions.js';
import { GroupCommit } from '../store/group-commit.js';
import {
  type BatchOutcome,
  type ClaimFields,
  type GaveUpRow,
  type KeyedClaim,
  queueRepo,
} from '../store/queue.js';
import type { ExecutionRow } from '../store/schema.js';
import type { ExecutionCompletion, Store } from '../store/store.js';

export type { BatchFinished, BatchOutcome } from '../store/queue.js';
export type { ClaimFields };

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

/** How often a claim first puts executions with lapsed leases back in the queue (`#recoverLapsed`). */
const RECOVERY_CHECK_MS = 1_000;

/**
 * How often a claim looks for due `waiting` rows it was not told about (parked by another worker
 * since its last look); rows it knows the due time of are claimed at that time (`waitingDueAt`).
 */
const WAITING_CHECK_MS = 1_000;

/** The error of an execution given up after MAX_ATTEMPTS crashed attempts. */
const GAVE_UP_CRASHED = JSON.stringify({
  message: `Gave up after ${MAX_ATTEMPTS} attempts: the worker running it stopped each time (crashed or was killed).`,
});

/** What a claim at `now` (epoch ms) by `workerId`, under a lease of `leaseMs`, writes on a row. */
export function claimFields(workerId: string, leaseMs: number, now: number): ClaimFields {
  return {
    status: 'running',
    locked_by: workerId,
    locked_until: isoString(new Date(now + leaseMs)),
    started_at: isoString(new Date(now)),
  };
}

export interface ExecutionResult {
  status: 'succeeded' | 'failed' | 'filtered' | 'waiting';
  /** The step records, when `record` does not hold them as JSON already (RunResult.record). */
  steps: unknown[];
  /** The step records as stored (JSON within the record limit), when the engine thread wrote them. */
  record?: string | undefined;
  error: unknown;
  /** Waiting: when it resumes (ISO-8601 UTC). */
  resumeAt?: string | undefined;
  /** Waiting: what the park adds to the checkpoint (RunResult.checkpoint): the new head and a part. */
  checkpoint?: CheckpointWrite | undefined;
}

export class Queue {
  readonly #store: Store;
  readonly #workerId: string;
  readonly #leaseMs: number;
  readonly #clock: Clock;
  #recoveredAt = 0;
  /** When `claim` last looked for due waiting rows (epoch ms). */
  #waitingCheckedAt = 0;
  /**
   * The earliest `run_after` of a waiting row this queue knows of (epoch ms): from the store after
   * each look, lowered by this worker's own parks (`complete`). Infinity: none known.
   */
  #waitingDueAt = 0;
  readonly #writer: GroupCommit;
  #gaveUp: ((rows: GaveUpRow[], error: { message: string }) => void) | undefined;
  #skipped: ((rows: ExecutionRow[]) => void) | undefined;

  constructor({
    store,
    workerId,
    leaseMs = LEASE_MS,
    writer,
    clock = systemClock,
  }: {
    store: Store;
    workerId: string;
    leaseMs?: number;
    /** Time for claims, leases, backoff and due waits (tests move a fake one). */
    clock?: Clock;
    /** Group commit for results; main.ts shares ingest's, so a cycle makes one transaction. */
    writer?: GroupCommit;
  }) {
    this.#store = store;
    this.#workerId = workerId;
    this.#leaseMs = leaseMs;
    this.#clock = clock;
    this.#writer = writer ?? new GroupCommit({ store });
  }

  /** What `locked_by` holds on the executions this queue claims. */
  get workerId(): string {
    return this.#workerId;
  }

  /** The lease of a claim; the worker heartbeats every third of it. */
  get leaseMs(): number {
    return this.#leaseMs;
  }

  /**
   * When the next waiting execution this queue knows of is due (epoch ms; Infinity when none): the
   * worker sets its timer to it, so a wait ends on time even when nothing else wakes the worker.
   */
  get waitingDueAt(): number {
    return this.#waitingDueAt;
  }

  /**
   * Claim up to `limit` due executions, oldest due first (graphile-worker orders by run_at, id).
   *
   * `status = 'queued' AND run_after <= now ORDER BY run_after, id` walks the (status, run_after)
   * index and stops after `limit` rows, whatever the history. With an OR for lapsed leases (or
   * ORDER BY id) PostgreSQL walked the primary key through every finished row instead: 6.7 ms per
   * claim with 50 000 finished executions, against 0.05 ms. Lapsed leases are therefore put back
   * in the queue by a statement of their own (`#recoverLapsed`), at most once a second.
   *
   * Due `waiting` rows are claimed by a statement of their own on the same index, first (they were
   * accepted earlier than anything queued now): `status IN ('queued', 'waiting')` cannot be read
   * from the index in run_after order, so PostgreSQL would sort every queued row for each claim.
   * That statement runs only when a waiting row may be due: at the earliest due time this queue
   * knows of, and once a second for rows other workers parked (`WAITING_CHECK_MS`).
   *
   * `queued: false` leaves queued rows to `batch` (PostgreSQL: queue/pure-batch.ts): recovery and
   * due waiting rows only. `maxChars` bounds the trigger JSON of the rows taken, but
   * takes at least one (store/queue.ts claimDue): a claim that returns fewer than `limit` rows
   * holding less than `maxChars` left no due row behind.
   */
  async claim(
    limit: number,
    { queued = true, maxChars }: { queued?: boolean; maxChars?: number } = {},
  ): Promise<ExecutionRow[]> {
    const now = new Date(this.#clock.now());
    const nowIso = now.toISOString();
    if (now.getTime() - this.#recoveredAt >= RECOVERY_CHECK_MS) {
      this.#recoveredAt = now.getTime();
      await this.#recoverLapsed(nowIso);
    }
    if (limit <= 0) return [];
    const rows: ExecutionRow[] = [];
    if (now.getTime() >= this.#waitingDueAt || now.getTime() - this.#waitingCheckedAt >= WAITING_CHECK_MS) {
      this.#waitingCheckedAt = now.getTime();
      rows.push(...(await this.#claimDue('waiting', limit, now, maxChars)));
      // All due ones taken: the next is the earliest left. Otherwise more are due: look again next time.
      this.#waitingDueAt = rows.length < limit ? await this.#nextWaiting() : 0;
    }
    // Keyed rows whose turn it is (store/queue-keys.ts claimKeyed), also when `batch` takes the others:
    // their turn is their key's, never a batch's. A skip frees the key's turn at once, so the
    // rows behind it are looked at again (each pass ends at least one row).
    for (let room = limit - rows.length; room > 0; room = limit - rows.length) {
      const keyed = await this.#claimKeyed(room, now);
      rows.push(...keyed.claimed);
      if (keyed.skipped.length > 0) this.#skipped?.(keyed.skipped);
      if (keyed.skipped.length === 0) break;
    }
    if (queued && rows.length < limit) {
      const left = maxChars === undefined ? undefined : maxChars - chars(rows);
      if (left === undefined || left > 0)
        rows.push(...(await this.#claimDue('queued', limit - rows.length, now, left)));
    }
    // RETURNING comes back in the update's plan order (on PostgreSQL often not the subquery's
    // ORDER BY), so restore oldest first here: ids are time-ordered UUIDv7.
    return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * PostgreSQL: up to `limit` due queued rows, oldest due first, locked in one transaction and
   * handed to `decide` with the fields that claim a row for this worker now; the rows it finished
   * and those it claimed are written in one statement and committed, the others stay queued
   * (store/queue.ts `batchQueued`). Resolves with `decide`'s outcome once committed.
   */
  batch<T extends BatchOutcome>(
    limit: number,
    decide: (rows: ExecutionRow[], claim: ClaimFields) => Promise<T>,
  ): Promise<T> {
    const now = new Date(this.#clock.now());
    const claim = claimFields(this.#workerId, this.#leaseMs, now.getTime());
    return queueRepo.batchQueued(this.#store, now.toISOString(), limit, claim, (rows) => decide(rows, claim));
  }

  /**
   * Running executions whose lease lapsed belong to a worker that died (or stalled past its
   * lease): one statement puts them all back in the queue as their next attempt, or fails those
   * on their last attempt. Like Oban's Lifeline and graphile-worker's resetLockedAt, it rescues
   * every stalled row at once, with no cap, into the ordinary queue: whichever workers have room
   * claim them next, oldest first (their `run_after` is already past), so a dead worker's
   * executions resume within the lease plus one poll. (Claiming them directly, 8 at a time once a
   * second, took 51 s for the ~400 rows a killed worker left.)
   *
   * It only takes rows it can lock at once (SKIP LOCKED), in id order: a row that a late worker
   * is completing right now is left to that completion (which then wins, its lease holder being
   * unchanged), and the statement can never wait on, nor deadlock with, a completion batch or a
   * heartbeat. Returns how many rows it released.
   */
  async #recoverLapsed(nowIso: string): Promise<number> {
    return this.#report(await queueRepo.recoverLapsed(this.#store, nowIso, MAX_ATTEMPTS, GAVE_UP_CRASHED));
  }

  /**
   * Who hears of the executions the queue fails itself (their attempts used up by crashes, in
   * recovery and on release): their error workflows are started like those of any other failure
   * (SPEC 7c: "when one of its production executions fails").
   */
  onGaveUp(listener: (rows: GaveUpRow[], error: { message: string }) => void): void {
    this.#gaveUp = listener;
  }

  /**
   * Who hears of the executions a claim ended `skipped` (newest wins, SPEC 7d): they finished
   * without running, and whoever waits for them is told as for any finish.
   */
  onSkipped(listener: (rows: ExecutionRow[]) => void): void {
    this.#skipped = listener;
  }

  #report({ released, gaveUp }: { released: number; gaveUp: GaveUpRow[] }): number {
    if (gaveUp.length > 0) this.#gaveUp?.(gaveUp, JSON.parse(GAVE_UP_CRASHED) as { message: string });
    return released;
  }

  /** The earliest `run_after` of a waiting row (epoch ms), Infinity when none waits. */
  async #nextWaiting(): Promise<number> {
    const runAfter = await queueRepo.nextWaiting(this.#store);
    return runAfter === undefined ? Number.POSITIVE_INFINITY : Date.parse(runAfter);
  }

  /**
   * Claims up to `limit` due rows of `status` for this worker at `now`, within `maxChars` of
   * trigger JSON (store/queue.ts claimDue).
   */
  #claimDue(
    status: 'queued' | 'waiting',
    limit: number,
    now: Date,
    maxChars: number | undefined,
  ): Promise<ExecutionRow[]> {
    const claim = claimFields(this.#workerId, this.#leaseMs, now.getTime());
    const nowIso = now.toISOString();
    if (this.#store.caps.shared)
      return queueRepo.claimDue(this.#store, status, nowIso, limit, claim, this.#store.db, maxChars);
    // SQLite: as a write of group commit (a callback transaction, run only when no hot batch is
    // in flight), not a transaction of its own on the event loop's connection. That one had to
    // wait for the writer thread's write lock, and SQLite's busy handler waits by sleeping: the
    // event loop slept ~9 ms per claim under a backlog (the bench's routed case), with
    // every request in the process waiting too. A claim often writes nothing, so its commit does
    // not count as the store taking writes again after an outage (`proves: false`).
    return this.#writer.run(
      (trx) => queueRepo.claimDue(this.#store, status, nowIso, limit, claim, trx, maxChars),
      {
        proves: false,
      },
    );
  }

  /** Keyed rows whose turn it is, for this worker at `now` (store/queue-keys.ts claimKeyed). */
  #claimKeyed(limit: number, now: Date): Promise<KeyedClaim> {
    const claim = claimFields(this.#workerId, this.#leaseMs, now.getTime());
    const nowIso = now.toISOString();
    if (this.#store.caps.shared) return queueRepo.claimKeyed(this.#store, nowIso, limit, claim);
    // SQLite: in a group commit transaction, as `#claimDue` says why; only when a keyed row may
    // start (reads on this connection: without keyed rows the claim costs one index probe).
    return queueRepo.keyedMayStart(this.#store.db, nowIso).then((may) =>
      may
        ? this.#writer.run((trx) => queueRepo.claimKeyed(this.#store, nowIso, limit, claim, trx), {
            proves: false,
          })
        : { claimed: [], skipped: [] },
    );
  }

  /**
   * Extend the lease of executions this worker is still running.
   *
   * Only rows it can lock at once, in id order (SKIP LOCKED): a row locked now is being completed
   * by this worker's group commit (or taken over by another's recovery), so its lease no longer
   * matters, and a heartbeat that waited for it could deadlock with that transaction (40P01: one
   * statement updating hundreds of ids in plan order against completion batches in theirs). A row
   * skipped once is renewed by the next beat, two more before the lease lapses.
   */
  async heartbeat(ids: string[]): Promise<void> {
    const lockedUntil = new Date(this.#clock.now() + this.#leaseMs).toISOString();
    await queueRepo.extendLeases(this.#store, ids, this.#workerId, lockedUntil);
  }

  /**
   * Record the result. Only while this worker still holds the execution: if its lease lapsed
   * (the process stalled past it) and another worker claimed the execution, that worker's attempt
   * is the one recorded. Returns whether this result was recorded.
   *
   * A waiting result writes its checkpoint's new head and appends its part (in the same
   * transaction, only when recorded); its records are in the checkpoint, so `steps` holds none
   * meanwhile. `resumed`: the execution ran from a checkpoint, whose parts a finish deletes.
   */
  async complete(id: string, result: ExecutionResult, { resumed = false } = {}): Promise<boolean> {
    const waiting = result.status === 'waiting';
    const checkpoint = waiting ? result.checkpoint : undefined;
    const completion: ExecutionCompletion = {
      id,
      lockedBy: this.#workerId,
      status: result.status,
      steps: checkpoint ? '[]' : (result.record ?? stepsJson(result.steps as object[])),
      error: result.error === undefined || result.error === null ? null : JSON.stringify(result.error),
      finishedAt: waiting ? null : new Date(this.#clock.now()).toISOString(),
      runAfter: waiting ? waitingUntil(result, this.#clock.now()) : null,
      resumeState: checkpoint ? checkpoint.head : null,
      ...(checkpoint ? { checkpointPart: { seq: checkpoint.seq, ...checkpoint.part } } : {}),
      ...(resumed && !waiting ? { dropCheckpoint: true } : {}),
    };
    // Group commit: results recorded in the same I/O phase (and the webhook requests accepted in
    // it) share a transaction. One transaction per result (one fsync with synchronous=FULL,
    // ~0.5 ms here) capped the executor near 2 000 executions/s and blocked the event loop for each.
    const recorded = await this.#writer.hot({ kind: 'complete', completion });
    if (recorded && completion.runAfter !== null)
      this.#waitingDueAt = Math.min(this.#waitingDueAt, Date.parse(completion.runAfter));
    return recorded;
  }

  /**
   * An attempt failed for a reason outside the workflow (e.g. its result could not be recorded):
   * queue the execution again as the next attempt after a backoff, or, past MAX_ATTEMPTS, fail
   * it for good with `reason` as its error. Returns the new status (and the error it failed with).
   */
  async retryLater(
    id: string,
    attempt: number,
    reason: string,
  ): Promise<'queued' | { failed: { message: string } }> {
    const now = this.#clock.now();
    if (attempt >= MAX_ATTEMPTS) {
      const error = { message: `Gave up after ${attempt} attempts: ${reason}` };
      await queueRepo.fail(
        this.#store,
        id,
        this.#workerId,
        JSON.stringify(error),
        new Date(now).toISOString(),
      );
      return { failed: error };
    }
    await queueRepo.requeue(this.#store, id, this.#workerId, {
      nextAttempt: attempt + 1,
      runAfter: new Date(now + backoffMs(attempt)).toISOString(),
      error: JSON.stringify({ message: `Attempt ${attempt} could not finish: ${reason}` }),
    });
    return 'queued';
  }

  /**
   * On start of a process that owns the whole store (embedded SQLite), every `running` row belongs
   * to a process that is gone: queue them again now, as their next attempt, instead of waiting for
   * their leases (those on their last allowed attempt are failed). Their `run_after` is old, so
   * they are claimed first. Returns how many rows were released (requeued or given up).
   */
  async releaseAbandoned(): Promise<number> {
    return this.#report(
      await queueRepo.releaseRunning(
        this.#store,
        new Date(this.#clock.now()).toISOString(),
        MAX_ATTEMPTS,
        GAVE_UP_CRASHED,
      ),
    );
  }

  /**
   * A worker stopping past its drain deadline (Worker.close): every execution it still holds
   * `running` goes back to the queue as its next attempt, at once, as its lease lapsing would
   * (the last allowed attempt is failed, as after a crash). Rows being completed right now are
   * skipped: their result is recorded. Returns how many were released.
   */
  async releaseHeld(): Promise<number> {
    return this.#report(
      await queueRepo.recoverLapsed(
        this.#store,
        new Date(this.#clock.now()).toISOString(),
        MAX_ATTEMPTS,
        GAVE_UP_CRASHED,
        this.#workerId,
      ),
    );
  }
}

/** The trigger JSON `rows` hold, in characters. */
export const chars = (rows: readonly ExecutionRow[]): number =>
  rows.reduce((n, row) => n + row.trigger.length, 0);

/** A waiting result's due time as stored (ISO-8601 UTC, so it sorts as text); unreadable: now. */
function waitingUntil(result: ExecutionResult, now: number): string {
  const at = result.resumeAt === undefined ? Number.NaN : Date.parse(result.resumeAt);
  return new Date(Number.isNaN(at) ? now : at).toISOString();
}
