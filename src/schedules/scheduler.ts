/**
 * The schedule trigger (SPEC 7f): while a workflow is active with a published schedule, each tick
 * of its cron starts one production execution with the item
 *   {"scheduledAt", "firedAt", "executionMode": "production"}.
 *
 * Exactly one per tick, however many processes schedule: a tick is claimed by inserting
 * (workflow, scheduledAt) if absent (store/schedules.ts) in the transaction that queues its
 * execution, and that transaction first checks that the schedule is still the live one (so a
 * deactivation or a new cron stops the old ticks at once, even on a process that has not heard of
 * it yet). No lock is held in memory: every scheduling process sets a timer for the next tick and
 * races for the claim; the loser inserts nothing.
 *
 * Which ticks are due: each schedule keeps a cursor, the time up to which its ticks are handled.
 * When a process takes a schedule up (start, activation, publish), the cursor starts at the latest
 * claimed tick or at `since` (when the cron went live), whichever is later:
 * - ticks between the cursor and now were missed while no process ran: `runOnce` (the default)
 *   claims the latest of them (unless a later one is claimed already), `skip` none;
 * - except just after it went live (GRACE_MS): those ticks came due while the notice travelled,
 *   and each is claimed.
 * A running process claims each tick as its timer fires. After a stall longer than MAX_BURST
 * ticks (a suspended machine) the ticks since are treated as missed, not replayed one by one.
 */
import type { Cron } from 'croner';
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import { newId, nowIso } from '../ids.js';
import { cronOf } from '../shared/schedule.js';
import { searchFieldRows } from '../store/execution-search.js';
import { executionsRepo, queuedExecution } from '../store/executions.js';
import { schedulesRepo } from '../store/schedules.js';
import type { ScheduleRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import { type Clock, systemClock } from './clock.js';

/** Ticks up to this long after a schedule went live are claimed one by one when it is taken up. */
export const GRACE_MS = 10_000;
/** More ticks than this due at one wake-up: the process was stalled; the policy for missed ticks applies. */
export const MAX_BURST = 100;
/** Claims are kept this long (only the latest is read; the unique key needs them while processes race). */
const KEEP_TICKS_MS = 3_600_000;
/** After a failed claim (store unavailable), try again this much later. */
const RETRY_MS = 1_000;

export interface SchedulerDeps {
  store: Store;
  /** Hears of publish/activate/deactivate (`workflow.changed`) and wakes the workers. */
  bus: Bus;
  log: Logger;
  clock?: Clock;
}

interface Entry {
  schedule: ScheduleRow;
  cron: Cron;
  /** The published version's searchable fields (its executions are indexed by them). */
  searchFields: string[] | undefined;
  /** Epoch ms up to which ticks are handled. */
  cursor: number;
  cancel: (() => void) | undefined;
  /** This schedule's work (take-up, wake-ups) runs one at a time, in order. */
  work: Promise<void>;
  closed: boolean;
}

type Mode = 'idle' | 'running' | 'closed';

export class Scheduler {
  readonly #d: SchedulerDeps;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  readonly #unsubscribe: (() => void)[] = [];
  #mode: Mode = 'idle';

  constructor(deps: SchedulerDeps) {
    this.#d = deps;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Take up every live schedule, and follow changes from the bus. */
  async start(): Promise<void> {
    if (this.#mode !== 'idle') throw new Error(`scheduler cannot start while ${this.#mode}`);
    this.#mode = 'running';
    this.#unsubscribe.push(
      this.#d.bus.subscribe('workflow.changed', ({ workflowId }) => this.reload(workflowId)),
      // Changes made while the bus was cut off were never announced here.
      this.#d.bus.subscribe('bus.resynced', () => this.load()),
    );
    await this.load();
    this.#d.log.info({ schedules: this.#entries.size }, 'scheduler started');
  }

  /** Re-read every live schedule. */
  async load(): Promise<void> {
    const rows = await schedulesRepo.list(this.#d.store.db);
    const live = new Set(rows.map((r) => r.workflow_id));
    for (const id of [...this.#entries.keys()]) if (!live.has(id)) this.#drop(id);
    await Promise.all(rows.map((r) => this.#take(r)));
  }

  /** Re-read one workflow's live schedule (after publish, activate, deactivate, delete). */
  async reload(workflowId: string): Promise<void> {
    if (this.#mode !== 'running') return;
    const row = await schedulesRepo.get(this.#d.store.db, workflowId);
    if (!row) this.#drop(workflowId);
    else await this.#take(row);
  }

  /** Resolves when no schedule has work in progress (tests with a fake clock wait for this). */
  async settled(): Promise<void> {
    for (;;) {
      const works = [...this.#entries.values()].map((e) => e.work);
      await Promise.all(works);
      if ([...this.#entries.values()].every((e, i) => e.work === works[i])) return;
    }
  }

  /** The workflows this process schedules (for logs and tests). */
  get size(): number {
    return this.#entries.size;
  }

  async close(): Promise<void> {
    if (this.#mode === 'closed') return;
    this.#mode = 'closed';
    for (const u of this.#unsubscribe) u();
    const works = [...this.#entries.values()].map((e) => e.work);
    for (const id of [...this.#entries.keys()]) this.#drop(id);
    await Promise.all(works);
  }

  async #take(row: ScheduleRow): Promise<void> {
    if (this.#mode !== 'running') return;
    const current = this.#entries.get(row.workflow_id);
    if (current && current.schedule.cron === row.cron && current.schedule.timezone === row.timezone) {
      if (current.schedule.since === row.since) {
        // The same ticks (a re-publish, a draft save): keep the timer; later claims run the new version.
        if (current.schedule.version !== row.version) {
          current.searchFields = await this.#searchFields(row);
          current.schedule = row;
        } else current.schedule = row;
        return;
      }
    }
    this.#drop(row.workflow_id);
    const entry: Entry = {
      schedule: row,
      cron: cronOf(row),
      searchFields: undefined,
      cursor: Date.parse(row.since),
      cancel: undefined,
      work: Promise.resolve(),
      closed: false,
    };
    this.#entries.set(row.workflow_id, entry);
    await this.#queue(entry, () => this.#takeUp(entry));
  }

  #drop(workflowId: string): void {
    const entry = this.#entries.get(workflowId);
    if (!entry) return;
    entry.closed = true;
    entry.cancel?.();
    this.#entries.delete(workflowId);
  }

  /** Run `fn` after the entry's earlier work; errors are logged, never thrown at the caller. */
  #queue(entry: Entry, fn: () => Promise<void>): Promise<void> {
    entry.work = entry.work.then(async () => {
      if (entry.closed) return;
      try {
        await fn();
      } catch (err) {
        this.#d.log.error({ err, workflowId: entry.schedule.workflow_id }, 'schedule work failed');
        this.#plan(entry, RETRY_MS);
      }
    });
    return entry.work;
  }

  async #takeUp(entry: Entry): Promise<void> {
    const { store } = this.#d;
    const id = entry.schedule.workflow_id;
    entry.searchFields = await this.#searchFields(entry.schedule);
    const last = await schedulesRepo.lastTick(store.db, id);
    const since = Date.parse(entry.schedule.since);
    entry.cursor = Math.max(since, last ? Date.parse(last) : since);
    const now = this.#clock.now();
    // Nothing claimed since it went live, moments ago: its ticks came due while the notice travelled.
    const fresh = entry.cursor === since && now - since <= GRACE_MS;
    if (fresh) await this.#claimDue(entry, now);
    else await this.#catchUp(entry, now);
    this.#plan(entry);
  }

  /** Ticks in (cursor, now] that no process ran: the latest of them under runOnce, none under skip. */
  async #catchUp(entry: Entry, now: number): Promise<void> {
    const first = entry.cron.nextRun(new Date(entry.cursor));
    if (!first || first.getTime() > now) {
      entry.cursor = now;
      return;
    }
    const latest = entry.cron.previousRuns(1, new Date(now + 1))[0] ?? first;
    if (entry.schedule.missed === 'runOnce') {
      const claimed = await this.#claim(entry, latest.getTime(), now, { onlyIfLatest: true });
      if (claimed)
        this.#d.log.info(
          { workflowId: entry.schedule.workflow_id, scheduledAt: latest.toISOString() },
          'missed schedule ticks: ran the latest once',
        );
    } else {
      this.#d.log.info(
        { workflowId: entry.schedule.workflow_id, since: new Date(entry.cursor).toISOString() },
        'missed schedule ticks skipped',
      );
    }
    entry.cursor = now;
  }

  /** Claim each tick in (cursor, now], in order; too many means a stall: missed. */
  async #claimDue(entry: Entry, now: number): Promise<void> {
    const due: number[] = [];
    let at = entry.cursor;
    while (due.length <= MAX_BURST) {
      const next = entry.cron.nextRun(new Date(at));
      if (!next || next.getTime() > now) break;
      at = next.getTime();
      due.push(at);
    }
    if (due.length > MAX_BURST) return this.#catchUp(entry, now);
    for (const tick of due) {
      await this.#claim(entry, tick, now);
      entry.cursor = tick;
    }
    entry.cursor = Math.max(entry.cursor, now);
  }

  /** Set the timer for the entry's next tick (or `retryMs` from now, after a failure). */
  #plan(entry: Entry, retryMs?: number): void {
    if (entry.closed) return;
    entry.cancel?.();
    const now = this.#clock.now();
    let delay = retryMs;
    if (delay === undefined) {
      const next = entry.cron.nextRun(new Date(Math.max(entry.cursor, now)));
      if (!next) return;
      delay = next.getTime() - now;
    }
    entry.cancel = this.#clock.setTimer(delay, () => {
      entry.cancel = undefined;
      void this.#queue(entry, async () => {
        await this.#claimDue(entry, this.#clock.now());
        this.#plan(entry);
      });
    });
  }

  /**
   * Queue the tick's execution if the tick is unclaimed and the schedule still live (in one
   * transaction); `onlyIfLatest`: and no later tick was claimed (a catch-up never runs behind).
   */
  async #claim(
    entry: Entry,
    tick: number,
    now: number,
    opts: { onlyIfLatest?: boolean } = {},
  ): Promise<boolean> {
    const { store, bus, log } = this.#d;
    const schedule = entry.schedule;
    const workflowId = schedule.workflow_id;
    const executionId = newId();
    const scheduledAt = new Date(tick).toISOString();
    const firedAt = new Date(now).toISOString();
    const item = { scheduledAt, firedAt, executionMode: 'production' };
    const outcome = await store.transaction(async (trx) => {
      const live = await schedulesRepo.getToClaim(trx, workflowId, store.caps.shared);
      if (!live || live.cron !== schedule.cron || live.timezone !== schedule.timezone)
        return 'stale' as const;
      if (opts.onlyIfLatest) {
        const last = await schedulesRepo.lastTick(trx, workflowId);
        if (last && last >= scheduledAt) return 'taken' as const;
      }
      const claimed = await schedulesRepo.claimTick(trx, {
        workflow_id: workflowId,
        scheduled_at: scheduledAt,
        execution_id: executionId,
        fired_at: firedAt,
      });
      if (!claimed) return 'taken' as const;
      await executionsRepo.insert(
        trx,
        queuedExecution({
          id: executionId,
          workflow_id: workflowId,
          workflow_version: live.version,
          mode: 'production',
          trigger: JSON.stringify(item),
          // The queue's time (due at once), which is the system clock's even when ticks are not.
          created_at: nowIso(),
        }),
        searchFieldRows({ id: executionId, workflow_id: workflowId }, entry.searchFields, item),
      );
      await schedulesRepo.pruneTicks(trx, workflowId, new Date(tick - KEEP_TICKS_MS).toISOString());
      return 'claimed' as const;
    });
    if (outcome === 'stale') {
      // Deactivated or changed: the notice is on its way; read the store now rather than wait.
      void this.reload(workflowId);
      return false;
    }
    if (outcome === 'taken') return false;
    log.debug({ workflowId, executionId, scheduledAt }, 'schedule tick started an execution');
    await bus.publish('execution.queued', {});
    return true;
  }

  async #searchFields(row: ScheduleRow): Promise<string[] | undefined> {
    const version = await workflowsRepo.getVersion(this.#d.store.db, row.workflow_id, row.version);
    return version?.settings?.searchFields;
  }
}
