/**
 * Queued executions on a shared store (PostgreSQL), in batches. A worker held to its slot rule
 * (at most `concurrency` rows `running`, a slot freed only once the result is
 * committed) runs at most concurrency ÷ (claim commit + run + result commit) executions a second:
 * 8 ÷ ~20 ms on a loaded 2-core machine, 200–500/s behind an ingest of 3–5k req/s.
 *
 * Most webhook workflows are pure (Engine.runsBeforeCommit: no network, nothing outside the
 * execution), and a pure run has no effect until its result is committed. So a batch locks the
 * oldest due queued rows in one transaction (FOR UPDATE SKIP LOCKED), runs the pure ones right
 * there on the event loop, each in the short slice a run before the commit gets (pure-run.ts),
 * and records them all in one statement before the COMMIT: one transaction for the whole batch
 * instead of two commits per execution, and the rows are never `running`. A worker killed before
 * the COMMIT leaves them `queued` and untouched (its transaction rolls back), so nothing is lost
 * and, since nothing of the run left the process, nothing ran twice; other workers skip the locked
 * rows meanwhile instead of running them too. The slot rule still holds: only the rows
 * claimed below are ever `running`.
 *
 * Workflows that are not pure only because a step or an expression may take long (a `code` step,
 * a regular expression: Engine.runsWithoutEffects) have no effect outside the execution either:
 * the batch runs them too, inside its transaction, but on the executor's engine thread, one at a
 * time, each given THREAD_RUN_MS. One that takes longer is left to its thread (its result will be
 * ignored: nothing of it counts) and goes to the executor like the rows below, and so do the
 * contained rows after it until it is back.
 *
 * The other rows of the batch — workflows with effects (`http`, `wait`), items too big for a run
 * here, runs that did not fit in their time, resumes from a checkpoint — are claimed in the same
 * statement, oldest first, for the free slots, and started after the COMMIT as any claimed row;
 * the rest stay `queued` (unlocked at the COMMIT) for the next batch, when slots are free again.
 * A pure row behind them still runs in this batch: it needs no slot.
 */
import type { Logger } from 'pino';
import type { Engine, RunResult } from '../engine/run.js';
import type { Workflow } from '../model/workflow.js';
import type { ExecutionRow } from '../store/schema.js';
import { failedRun, fillFinished, PURE_MAX_ITEM_CHARS, runPure } from './pure-run.js';
import { nowIso } from '../ids.js';
import { type EngineRunner, EngineThreadLost } from './engine-runner.js';
import type { BatchFinished, ClaimFields, Queue } from './queue.js';

/**
 * Rows locked per batch. Measured with `npm run bench -- --postgres` (set → filter → set, ~3–5k
 * req/s accepted on 2 shared cores): see docs/scaling.md "Where the time goes". A batch costs four
 * round trips (BEGIN, the locking SELECT, one UPDATE, COMMIT with its WAL flush) whatever its
 * size, so the bigger the batch the less each row pays; past what arrives during one batch
 * (~50–150 rows at that rate) it is only a bigger SELECT, and the time budget bounds the rest.
 */
export const BATCH_ROWS = 128;

/**
 * Time one batch may spend running rows (on the event loop, or waiting for the engine thread)
 * before it stops taking more (the rows past it stay queued for the next batch, which starts at
 * once). It bounds how long the batch's row locks are held and how long heartbeats, notices and,
 * in `hookflow start`, HTTP requests wait for the event loop: ~128 runs of the bench's three-step
 * workflow take 5–15 ms, so a batch normally ends on BATCH_ROWS first, and a slow one (a heavy
 * pure workflow, a loaded machine) holds at most this plus one slice (PURE_SLICE_MS) or one
 * THREAD_RUN_MS.
 */
export const BATCH_BUDGET_MS = 25;

/**
 * How long a contained run (a `code` step, a regular expression) may take on the engine thread
 * inside a batch before it is left to the executor. The bench's routed case (a switch and a
 * one-line `code` step) takes 0.3–0.4 ms there; a run past this is heavy, or the thread is busy
 * with other executions: either way a slot is the place for it, and for the contained rows after
 * it until the thread is back. A batch holds its rows at most BATCH_BUDGET_MS plus this.
 */
export const THREAD_RUN_MS = 50;

/**
 * Ids of rows that did not fit in their slice, so that the next batches claim them for the engine
 * thread instead of spending a slice on them again. Bounded: past it the set starts over (an id
 * forgotten costs one more slice, nothing else).
 */
const MAX_REMEMBERED = 10_000;

export interface PureBatchesDeps {
  queue: Queue;
  /** The engine that runs pure workflows on the event loop (Worker's, as for `offer`). */
  engine: Engine;
  /** The executor's engine thread, for contained workflows (Worker's). */
  runner: Pick<EngineRunner, 'run'>;
  /** A workflow version (VersionCache in front of the store); undefined when it no longer exists. */
  workflow(id: string, version: number): Promise<Workflow | undefined>;
  log: Logger;
}

/** A row the batch ran to its end: its fields filled in as committed, and its version. */
export type FinishedRow = ExecutionRow & { status: BatchFinished['status'] };

/** What the executor gives a round (Worker): its free slots now, and where claimed rows go. */
export interface Slots {
  /** Room now: how many more rows this worker may hold `running` (slots.ts `claimRoom`). */
  free(): number;
  /**
   * HOOKFLOW_EXECUTOR_CONCURRENCY: rows the executor holds at most for computing alone (contained
   * workflows while the thread is busy, runs that did not fit their time): they hold a compute
   * slot all along, so more would only wait on the thread while the next batches could run them.
   */
  compute: number;
  /** Whether the executor still holds the execution `id` (started or waiting to start). */
  holds(id: string): boolean;
  /** Rows claimed for this worker (`running`, committed): run them (in a slot, as they free up). */
  adopt(rows: readonly ExecutionRow[]): void;
}

export interface RoundResult {
  /** Committed finished: to announce (and to start error workflows for). */
  finished: FinishedRow[];
  /** Take the next round at once: the batch was full and ran rows, or stopped on its budget. */
  again: boolean;
  /** No due row was left queued: the queue is empty as far as this round could see. */
  drained: boolean;
}

interface Decided {
  finished: BatchFinished[];
  claimed: string[];
  /** Rows claimed or left that need the executor's room (workflows with effects), not a compute slot. */
  needRoom: number;
  rows: { finished: FinishedRow[]; claimed: ExecutionRow[] };
  locked: number;
  left: number;
  overBudget: boolean;
}

export class PureBatches {
  readonly #deps: PureBatchesDeps;
  readonly #heavy = new Set<string>();
  /**
   * Whether the last look at the head of the queue found only rows that need a slot (workflows
   * with effects). Then a batch would lock BATCH_ROWS rows to claim the one or two a freed slot has
   * room for, four round trips each time: a backlog of 5 000 such rows (`code` workflows, before
   * they ran in batches) drained at 315 executions/s that way, against 733/s before batches. So
   * rounds claim as before (one statement per freed slot: 663–682/s, within noise of before) until
   * a claimed row needs no slot again.
   */
  #headNeedsSlots = false;
  /**
   * A contained run overstayed THREAD_RUN_MS and has not come back: the thread is busy (a heavy
   * run, other executions, or the thread still loading after a start), so until it is back
   * contained rows go to the executor's slots instead of each batch waiting for it again.
   */
  #threadBusy = false;
  /** Rows claimed for computing alone that the executor may still hold (see Slots.compute). */
  readonly #computing = new Set<string>();

  constructor(deps: PureBatchesDeps) {
    this.#deps = deps;
  }

  /**
   * One round: lapsed leases and due waiting rows as before (`Queue.claim`, for the free slots),
   * then one batch of queued rows; or, while the head of the queue needs slots, one claim.
   * Resolves once committed, with the rows it finished (claimed ones are adopted as they come).
   */
  async round(slots: Slots): Promise<RoundResult> {
    const { queue } = this.#deps;
    for (const id of this.#computing) if (!slots.holds(id)) this.#computing.delete(id);
    if (this.#headNeedsSlots) {
      const room = Math.min(slots.free(), BATCH_ROWS);
      if (room <= 0) return { finished: [], again: false, drained: false };
      const rows = await queue.claim(room);
      slots.adopt(rows);
      for (const row of rows) {
        const how = await this.#how(row);
        if (how !== 'executor') {
          this.#headNeedsSlots = false;
          break;
        }
      }
      return { finished: [], again: rows.length === room, drained: rows.length < room };
    }
    slots.adopt(await queue.claim(Math.max(0, slots.free()), { queued: false }));
    const d = await queue.batch(BATCH_ROWS, (rows, claim) =>
      this.#decide(rows, claim, slots.free(), Math.max(0, slots.compute - this.#computing.size)),
    );
    for (const row of d.computing) this.#computing.add(row);
    for (const row of d.rows.claimed) this.#heavy.delete(row.id);
    slots.adopt(d.rows.claimed);
    // Rows that wait for a compute slot (the thread busy) are no reason to claim by the slot.
    if (d.finished.length === 0 && d.needRoom > 0 && !d.overBudget) this.#headNeedsSlots = true;
    return {
      finished: d.rows.finished,
      again: d.overBudget || (d.locked === BATCH_ROWS && d.finished.length > 0),
      drained: d.left === 0 && d.locked < BATCH_ROWS,
    };
  }

  async #decide(
    rows: ExecutionRow[],
    claim: ClaimFields,
    freeSlots: number,
    computeSlots: number,
  ): Promise<Decided & { computing: string[] }> {
    const out: Decided & { computing: string[] } = {
      finished: [],
      claimed: [],
      needRoom: 0,
      computing: [],
      rows: { finished: [], claimed: [] },
      locked: rows.length,
      left: 0,
      overBudget: false,
    };
    const started = performance.now();
    let free = freeSlots;
    let compute = computeSlots;
    const claimOrLeave = (row: ExecutionRow, computing: boolean) => {
      if (!computing) out.needRoom++;
      if (free <= 0 || (computing && compute <= 0)) {
        out.left++;
        return;
      }
      free--;
      if (computing) {
        compute--;
        out.computing.push(row.id);
      }
      out.claimed.push(row.id);
      // As the claim statement writes it (a new value: the locked row stays as read): a resumed
      // execution keeps the time it first started.
      out.rows.claimed.push({
        ...row,
        ...claim,
        started_at: row.resume_state == null ? claim.started_at : row.started_at,
      });
    };
    for (const row of rows) {
      if (!out.overBudget && performance.now() - started >= BATCH_BUDGET_MS) out.overBudget = true;
      const how = await this.#how(row);
      if (how === 'executor' || how === 'compute') claimOrLeave(row, how === 'compute');
      // Past the budget a row that needs no slot waits for the next batch (which starts at once).
      else if (out.overBudget) out.left++;
      else if (how === 'here' ? await this.#run(row) : await this.#runOnThread(row)) {
        const r = row as FinishedRow;
        out.finished.push({
          id: r.id,
          status: r.status,
          steps: r.steps,
          error: r.error,
          startedAt: r.started_at!,
          finishedAt: r.finished_at!,
        });
        out.rows.finished.push(r);
      } else claimOrLeave(row, true);
    }
    return out;
  }

  /**
   * Runs pure `row` here and fills it in finished; false, with `row` untouched, when it did not fit
   * in its slice (remembered: the executor runs it, with the whole execution budget).
   */
  async #run(row: ExecutionRow): Promise<boolean> {
    const workflow = await this.#deps.workflow(row.workflow_id, row.workflow_version);
    if (!workflow) {
      // What the executor would record (worker.ts #execute), without a claim to record it with.
      fillFinished(
        row,
        failedRun(`Workflow ${row.workflow_id} version ${row.workflow_version} no longer exists.`),
        nowIso(),
      );
      return true;
    }
    let item: unknown;
    try {
      item = JSON.parse(row.trigger);
    } catch {
      // Not expected (ingest stores JSON); the executor records what it makes of it, and the
      // batch goes on instead of failing on this row every time.
      return false;
    }
    const done = await runPure(this.#deps.engine, workflow, row, item, (err) =>
      this.#deps.log.error({ err, executionId: row.id, workflowId: row.workflow_id }, 'execution crashed'),
    );
    if (!done) this.#remember(row.id);
    return done;
  }

  /**
   * Runs contained `row` on the engine thread and fills it in finished; false, with `row` untouched,
   * when it took longer than THREAD_RUN_MS, or the thread was lost under it (remembered: the
   * executor runs it). An engine crash is a failed execution, as in the executor.
   */
  async #runOnThread(row: ExecutionRow): Promise<boolean> {
    const workflow = (await this.#deps.workflow(row.workflow_id, row.workflow_version))!;
    const startedAt = nowIso();
    const run = this.#deps.runner
      .run(workflow, row.trigger, { executionId: row.id, mode: row.mode, attempt: row.attempt })
      .catch((err: unknown): RunResult | undefined => {
        if (err instanceof EngineThreadLost) return undefined;
        this.#deps.log.error({ err, executionId: row.id, workflowId: row.workflow_id }, 'execution crashed');
        return failedRun(err instanceof Error ? err.message : String(err));
      });
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      run,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), THREAD_RUN_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!result) {
      this.#threadBusy = true;
      void run.finally(() => {
        this.#threadBusy = false;
      });
    }
    // Not expected: a contained workflow has no `wait`; the executor parks it.
    if (!result || result.status === 'waiting') {
      this.#remember(row.id);
      return false;
    }
    fillFinished(row, result, startedAt);
    return true;
  }

  #remember(id: string): void {
    if (this.#heavy.size >= MAX_REMEMBERED) this.#heavy.clear();
    this.#heavy.add(id);
  }

  /**
   * Where `row` runs: 'here' (pure: on the event loop, in its slice), 'thread' (contained: on the
   * engine thread, within THREAD_RUN_MS, unless it is busy), or 'executor' (a slot): its workflow
   * has effects, its item is too big for a run in a batch, it did not fit in its time before, or it
   * resumes from a checkpoint (only the executor resumes; a workflow without effects never parks,
   * so this is not expected). A version that no longer exists runs 'here', recorded failed (`#run`).
   */
  async #how(row: ExecutionRow): Promise<'here' | 'thread' | 'executor' | 'compute'> {
    if (row.resume_state != null || row.trigger.length > PURE_MAX_ITEM_CHARS) return 'executor';
    if (this.#heavy.has(row.id)) return 'compute';
    const workflow = await this.#deps.workflow(row.workflow_id, row.workflow_version);
    if (!workflow || this.#deps.engine.runsBeforeCommit(workflow)) return 'here';
    if (!this.#deps.engine.runsWithoutEffects(workflow)) return 'executor';
    return this.#threadBusy ? 'compute' : 'thread';
  }
}
