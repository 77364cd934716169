/**
 * Waits for a call or an event (SPEC 7g; the step is engine/steps/wait.ts). A waiting `wait` is
 * an `execution_waits` row (store/waits.ts), registered by the step the first time it runs; the
 * execution then parks (`waiting`, no slot held) until the wait's timeout.
 *
 * - A call to the execution's resume URL (engine/resume-url.ts) resumes its waiting call wait in
 *   one transaction — the wait's item, the call's files, the execution made due at once — committed
 *   before the 200. Of concurrent calls exactly one wins (a conditional update); a later one is
 *   409 `already_resumed`; a bad token, or an execution with no call wait waiting, 404 `not_waiting`.
 * - An event wait is matched where requests are stored: when a production request of a workflow
 *   some wait watches is accepted, its write (ingest.ts) evaluates the waits' `match` templates on
 *   its item and resumes every wait whose key it gives, in the transaction that stores the request
 *   (`eventWrite`). Workflows nobody waits on pay nothing: which are watched is kept in memory
 *   (`watching`), told across processes on the bus and re-read every WATCHED_REFRESH_MS.
 * - No event falls between the two: the wait looks back when it registers, at the production
 *   requests of the watched workflow accepted since its execution started ("the first production
 *   request accepted by that workflow whose match equals", from the start of the run: an event the
 *   step before the wait caused counts), and on every later look of the parked step (1 s, then
 *   doubling), from where the last look ended less LOOK_MARGIN_MS. That catches a request stored
 *   while the registration committed, or by a process that had not heard of the wait yet.
 */
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import { AppError } from '../errors.js';
import { nowIso } from '../ids.js';
import { matchKey } from '../engine/event-match.js';
import { type ResumeUrlOptions, resumeTokenValid, resumeUrl } from '../engine/resume-url.js';
import { ServiceRefusal, type WaitRequest, type WaitState } from '../engine/services.js';
import type { GroupWrite } from '../store/group-commit.js';
import type { NewBlobRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { subExecutionsRepo } from '../store/sub-executions.js';
import { type WaitRow, waitsRepo } from '../store/waits.js';
import { workflowsRepo } from '../store/workflows.js';
import { parentStepKey } from './sub-workflows.js';

/** A look goes back this far before where the last one ended: requests still committing then. */
export const LOOK_MARGIN_MS = 60_000;
/** Requests one look examines at most (the next look goes on from there). */
const LOOK_BATCH = 1_000;
/** How often the watched workflows are read again from the store (dropping those nobody waits on). */
const WATCHED_REFRESH_MS = 60_000;

export type CallResume = 'resumed' | 'already_resumed' | 'not_waiting';

/** What a waiting execution waits for (GET /executions/:id `waitingFor`). */
export type WaitingFor =
  | { for: 'call'; step: string; expiresAt: string; resumeUrl: string }
  | { for: 'event'; step: string; expiresAt: string; workflowId: string; key: string };

export class Waits {
  readonly #store: Store;
  readonly #bus: Bus;
  readonly #log: Logger;
  readonly #resume: ResumeUrlOptions;
  #watched = new Set<string>();
  /** Workflows added since the last refresh started: a refresh keeps them (their rows may be committing). */
  #added = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor({
    store,
    bus,
    log,
    resumeUrls,
  }: { store: Store; bus: Bus; log: Logger; resumeUrls: ResumeUrlOptions }) {
    this.#store = store;
    this.#bus = bus;
    this.#log = log;
    this.#resume = resumeUrls;
  }

  async start(): Promise<void> {
    const unwatch = this.#bus.subscribe('wait.watched', ({ workflowId }) => {
      this.#watch(workflowId);
    });
    const resync = this.#bus.subscribe('bus.resynced', () => this.#refresh());
    this.#unsubscribe = () => {
      unwatch();
      resync();
    };
    await this.#refresh();
    this.#timer = setInterval(() => void this.#refresh(), WATCHED_REFRESH_MS);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#unsubscribe?.();
  }

  /** Whether some event wait may be waiting on this workflow's requests (a cheap, in-memory check). */
  watching(workflowId: string): boolean {
    return this.#watched.size > 0 && this.#watched.has(workflowId);
  }

  #watch(workflowId: string): void {
    this.#watched.add(workflowId);
    this.#added.add(workflowId);
  }

  async #refresh(): Promise<void> {
    this.#added = new Set();
    try {
      const watched = new Set(await waitsRepo.watched(this.#store.db));
      for (const id of this.#added) watched.add(id);
      this.#watched = watched;
    } catch (err) {
      this.#log.warn({ err }, 'reading the workflows waits watch failed; keeping the last ones');
    }
  }

  /** The engine's service (engine/services.ts): registers the wait when new, answers where it stands. */
  async waitFor(req: WaitRequest): Promise<WaitState> {
    const db = this.#store.db;
    const step = parentStepKey(req.step, req.indices);
    let row = await waitsRepo.get(db, req.executionId, step);
    if (!row) {
      if (req.kind === 'event') {
        const target = await workflowsRepo.get(db, req.workflowId!);
        if (!target)
          throw new ServiceRefusal(
            `The workflow ${req.workflowId} does not exist (any more): no event can come from it.`,
          );
        // Watched here before the row exists, and told to the other processes at once: from now
        // on the requests this process stores are matched in their transaction.
        this.#watch(req.workflowId!);
        void this.#bus
          .publish('wait.watched', { workflowId: req.workflowId! })
          .catch((err) => this.#log.warn({ err }, 'wait notice failed'));
      }
      const now = nowIso();
      const started = (await waitsRepo.createdAt(db, req.executionId)) ?? now;
      await waitsRepo.insertIfAbsent(db, {
        execution_id: req.executionId,
        step,
        kind: req.kind,
        status: 'waiting',
        workflow_id: req.workflowId ?? null,
        match: req.match ?? null,
        match_key: req.key ?? null,
        item: null,
        created_at: now,
        expires_at: req.expiresAt,
        resumed_at: null,
        look_from: req.kind === 'event' ? started : null,
      });
      row = (await waitsRepo.get(db, req.executionId, step))!;
    }
    if (row.status === 'waiting' && row.kind === 'event') row = await this.#lookBack(row);
    if (row.status === 'waiting' && Date.parse(row.expires_at) <= Date.now()) {
      if (!(await waitsRepo.timeOut(db, row.execution_id, row.step, nowIso())))
        row = (await waitsRepo.get(db, row.execution_id, row.step))!;
      else return { status: 'timedOut' };
    }
    return stateOf(row);
  }

  /**
   * An event wait's look at the requests stored since its last one: the first whose match gives
   * its key resumes it. The wait as it stands after.
   */
  async #lookBack(row: WaitRow): Promise<WaitRow> {
    const db = this.#store.db;
    const workflowId = row.workflow_id!;
    const from = Date.parse(row.look_from ?? row.created_at);
    const lookedAt = Date.now();
    const requests = await waitsRepo.productionSince(db, workflowId, from, LOOK_BATCH);
    for (const request of requests) {
      const key = await matchKey(row.match!, JSON.parse(request.trigger), workflowId);
      if (key === undefined || key !== row.match_key) continue;
      await waitsRepo.resume(db, row.execution_id, row.step, request.trigger, nowIso());
      return (await waitsRepo.get(db, row.execution_id, row.step))!;
    }
    const next =
      requests.length === LOOK_BATCH
        ? Date.parse(requests[requests.length - 1]!.created_at)
        : Math.max(from, lookedAt - LOOK_MARGIN_MS);
    if (next !== from) await waitsRepo.lookFrom(db, row.execution_id, row.step, new Date(next).toISOString());
    return row;
  }

  /**
   * A call to a resume URL: the execution's waiting call wait resumed with `item` (and the call's
   * files stored), the execution due at once, committed before this returns.
   */
  async resumeByCall(
    executionId: string,
    token: string,
    item: unknown,
    blobs: readonly NewBlobRow[],
  ): Promise<void> {
    if (!resumeTokenValid(this.#resume.key, executionId, token)) throw notWaiting();
    const itemJson = JSON.stringify(item);
    const outcome = await this.#store.transaction(async (trx): Promise<CallResume> => {
      const calls = (await waitsRepo.ofExecution(trx, executionId)).filter((w) => w.kind === 'call');
      const waiting = calls.find((w) => w.status === 'waiting');
      if (!waiting) return calls.some((w) => w.status === 'resumed') ? 'already_resumed' : 'not_waiting';
      const now = nowIso();
      if (!(await waitsRepo.resume(trx, executionId, waiting.step, itemJson, now))) return 'already_resumed';
      if (blobs.length > 0) await this.#store.hot.insertBlobs(trx, blobs);
      await subExecutionsRepo.wake(trx, executionId, now);
      return 'resumed';
    });
    if (outcome === 'not_waiting') throw notWaiting();
    if (outcome === 'already_resumed')
      throw new AppError('already_resumed', 'This execution was resumed already: a resume URL works once.', {
        hint: 'Each call wait is resumed by the first call to its URL; look at the execution to see what resumed it.',
      });
    await this.#wakeUp();
  }

  /**
   * The write that matches a production request of a watched workflow (see `watching`) against
   * the waits on it, in the transaction that stores the request; `after()` once it is committed.
   */
  eventWrite(
    workflowId: string,
    item: unknown,
    itemJson: string,
  ): {
    write: GroupWrite<void>;
    after: () => Promise<void>;
  } {
    let woke = false;
    return {
      write: async (trx) => {
        const waits = await waitsRepo.waitingOn(trx, workflowId);
        if (waits.length === 0) return;
        const keys = new Map<string, string | undefined>();
        const now = nowIso();
        for (const wait of waits) {
          const match = wait.match!;
          if (!keys.has(match)) keys.set(match, await matchKey(match, item, workflowId));
          const key = keys.get(match);
          if (key === undefined || key !== wait.match_key) continue;
          if (await waitsRepo.resume(trx, wait.execution_id, wait.step, itemJson, now)) {
            await subExecutionsRepo.wake(trx, wait.execution_id, now);
            woke = true;
          }
        }
      },
      after: () => (woke ? this.#wakeUp() : Promise.resolve()),
    };
  }

  async #wakeUp(): Promise<void> {
    await this.#bus
      .publish('execution.queued', {})
      .catch((err) => this.#log.error({ err }, 'wake-up failed'));
  }

  /**
   * What a waiting execution waits for (the execution page): its resume URL, or the workflow and
   * key; null when it waits for no call or event (a time, an http retry, a sub-workflow).
   */
  async waitingFor(executionId: string): Promise<WaitingFor | null> {
    const rows = await waitsRepo.ofExecution(this.#store.db, executionId);
    const w = rows.find((r) => r.status === 'waiting');
    if (!w) return null;
    return w.kind === 'call'
      ? {
          for: 'call',
          step: w.step,
          expiresAt: w.expires_at,
          resumeUrl: resumeUrl(this.#resume, executionId),
        }
      : {
          for: 'event',
          step: w.step,
          expiresAt: w.expires_at,
          workflowId: w.workflow_id!,
          key: w.match_key!,
        };
  }
}

function stateOf(row: WaitRow): WaitState {
  if (row.status === 'resumed') return { status: 'resumed', item: JSON.parse(row.item!) };
  if (row.status === 'timed_out') return { status: 'timedOut' };
  return { status: 'waiting', expiresAt: row.expires_at };
}

function notWaiting(): AppError {
  return new AppError('not_waiting', 'No execution waits for a call at this URL.', {
    hint: 'The URL is unknown, or its execution has not reached its wait for a call yet, or no longer waits (it timed out or ended).',
  });
}
