/**
 * The executor loop of one process: claims due executions from the queue, runs them with the
 * engine, records the results and announces completions on the bus. Up to
 * HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT executions are in flight here (slots.ts); of those,
 * HOOKFLOW_EXECUTOR_CONCURRENCY compute at once on the engine thread, the others wait on the
 * network without a slot (compute-slots.ts).
 * Woken by `execution.queued` notices, and by a slow poll for what notices cannot announce
 * (backoff deadlines, lapsed leases of crashed workers).
 *
 * At-least-once: an execution left `queued` by a stopped process is simply claimed; one left
 * `running` is claimed again once its lease lapses (at once on embedded SQLite, where every
 * `running` row at start belongs to a process that is gone) and restarts from its first step
 * with attempt + 1. Steps must therefore tolerate running twice (an `http` step may be sent twice).
 *
 * Waiting (SPEC 7b `wait`, 7c retry pauses): a run the engine parks is recorded `waiting` with its
 * checkpoint (`resume_state`) and due time (`run_after`), and its slot and lease are given up. The
 * queue hands it out again when it is due, to any worker (`Queue.claim`), and the engine continues
 * from the checkpoint: the steps before the wait never run again, even when the resumed attempt
 * crashes and is claimed once more (the checkpoint stays until a result replaces it).
 */
import type { Logger } from 'pino';
import type { EngineServices } from '../engine/services.js';
import type { RunCredentials, TokenSource } from '../engine/credentials.js';
import type { RunVariables } from '../engine/types.js';
import { Engine } from '../engine/run.js';
import { type Cancel, type Clock, systemClock } from '../shared/clock.js';
import { isPromise } from '../shared/maybe-promise.js';
import type { ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { Bus } from '../bus/bus.js';
import type { ExecutionEntry, Offer, Offered, QueuedNotice } from './entry.js';
import { StoredFiles } from './engine-files.js';
import { EngineRunner, type EngineRunnerOptions } from './engine-runner.js';
import { ExecutionRun } from './execution-run.js';
import { type FailedExecution, Finished } from './finished.js';
import { PureBatches } from './pure-batch.js';
import { runPure } from './pure-run.js';
import { chars, claimFields, type Queue } from './queue.js';
import { type Holding, type SlotPolicy, slotPolicy } from './slots.js';

const POLL_MS = 1_000;

/**
 * The worker's modes (after graphile-worker's localQueue.ts), every change asserted (`#to`):
 * - `created`: built, not started: new executions are stored queued for whichever worker claims;
 * - `starting`: releasing what a previous process left `running` (alone on its store);
 * - `running`: claims, takes handed-over executions, runs them;
 * - `draining`: closing: claims nothing more, lets what it holds finish until the deadline;
 * - `releasing`: past the deadline: what it still holds goes back to the queue, as after a crash;
 * - `stopped`: holds nothing, the engine thread is closed.
 */
export type WorkerMode = 'created' | 'starting' | 'running' | 'draining' | 'releasing' | 'stopped';

const TRANSITIONS: Record<WorkerMode, readonly WorkerMode[]> = {
  created: ['starting', 'draining'],
  starting: ['running', 'draining'],
  running: ['draining'],
  draining: ['releasing', 'stopped'],
  releasing: ['stopped'],
  stopped: [],
};

export interface WorkerDeps {
  store: Store;
  queue: Queue;
  bus: Bus;
  /** Tells the workers (this one too) that executions were stored queued. */
  notice: QueuedNotice;
  log: Logger;
  /** HOOKFLOW_EXECUTOR_CONCURRENCY: executions that compute at once (the engine thread's slots). */
  concurrency: number;
  /** HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: executions held at once, most waiting on the network (default 1 000). */
  maxInFlight?: number;
  /** config.ingest.runPure: whether `offer` may run a pure workflow before its commit (default true). */
  runPure?: boolean;
  /** config.engine: the private-network switch and the time budget of one execution. */
  engine: EngineRunnerOptions;
  /** The data store and sub-workflows, for `store` and `workflow` steps (engine/services.ts). */
  services?: EngineServices;
  /** Unseals the credentials a version's `http` steps name, for one run (credentials/service.ts). */
  credentials?: { forRun(steps: readonly unknown[]): Promise<RunCredentials | undefined> };
  /** The access tokens of `oauth2` credentials, asked for by `http` steps as they run (credentials/oauth2.ts). */
  tokens?: TokenSource;
  /** The variables of one run, secrets unsealed (variables/service.ts), for versions naming $vars or $secrets. */
  variables?: { forRun(): Promise<RunVariables> };
  /**
   * Told once the failure of a production execution whose workflow names an error workflow is
   * recorded (SPEC 7c; executions/error-workflows.ts queues that workflow's execution).
   */
  onFailed?: (failed: FailedExecution) => Promise<void>;
  /** Time for polls, heartbeats, waiting timers and retries (tests move a fake one). */
  clock?: Clock;
}

export const DEFAULT_MAX_IN_FLIGHT = 1_000;

export class Worker implements ExecutionEntry {
  readonly #deps: WorkerDeps;
  readonly #clock: Clock;
  readonly #engine: Engine;
  /** Runs claimed and handed-over executions off the event loop (engine-runner.ts). */
  readonly #runner: EngineRunner;
  readonly #finished: Finished;
  /** Runs one execution and records its result (execution-run.ts). */
  readonly #executions: ExecutionRun;
  /** Embedded or shared: how much this worker holds and when it takes more (slots.ts). */
  readonly #slots: SlotPolicy;
  #mode: WorkerMode = 'created';
  /** Every execution started here, until its result is recorded (heartbeats cover them all). */
  readonly #running = new Map<string, Promise<void>>();
  /** Claimed or handed-over executions not started yet (the in-flight cap was reached). */
  readonly #ready: ExecutionRow[] = [];
  /** What this worker holds, for the slot policy. */
  readonly #holding: Holding = {
    inFlight: 0,
    inFlightBytes: 0,
    ready: 0,
    reserved: 0,
    readyBytes: 0,
    outside: 0,
  };
  /** PostgreSQL: queued rows are taken in batches, pure ones run in the batch (pure-batch.ts). */
  readonly #batches: PureBatches | undefined;
  /** The claim or batch in progress (`poke`), which `close` lets finish; `#again`: poked meanwhile. */
  #filling: Promise<void> | undefined;
  #again = false;
  /**
   * Due executions may wait in the store (queued by a full executor, by retry/replay, by another
   * process, or left by a previous run): hand-over pauses so they are claimed first, in order
   * (pure runs do not wait: see `offer`). Cleared by a claim that finds fewer rows than it asked
   * for; `#backlogSeq` keeps a claim that began before news of a backlog (a notice, or the first
   * row this worker could not take) from clearing it.
   */
  #backlog = true;
  #backlogSeq = 0;
  /** Timers and the bus subscription of the `running` mode, cancelled by `close`. */
  #cancelPoll: Cancel | undefined;
  #cancelHeartbeat: Cancel | undefined;
  #unsubscribe: (() => void) | undefined;
  /** Wakes the worker when the next waiting execution it knows of is due (`#armWaitingTimer`). */
  #cancelWaitingTimer: Cancel | undefined;
  #waitingTimerAt = Number.POSITIVE_INFINITY;
  #closed: Promise<void> | undefined;

  constructor(deps: WorkerDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#engine = new Engine(deps.engine);
    this.#finished = new Finished(deps);
    this.#runner = new EngineRunner({
      options: deps.engine,
      computeSlots: deps.concurrency,
      log: deps.log,
      files: new StoredFiles(deps.store),
      tokens: deps.tokens,
      services: deps.services,
      // A run that waits on the outside world leaves room for another to compute.
      onOutside: (outside) => {
        const more = outside > this.#holding.outside;
        this.#holding.outside = outside;
        if (!more || this.#mode !== 'running') return;
        this.#startReady();
        if (this.#backlog) this.poke();
      },
    });
    this.#slots = slotPolicy({
      shared: deps.store.caps.shared,
      concurrency: deps.concurrency,
      maxInFlight: deps.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
    });
    this.#executions = new ExecutionRun({
      ...deps,
      clock: this.#clock,
      engine: this.#engine,
      runner: this.#runner,
      finished: this.#finished,
      freeBeforeRecord: this.#slots.freeBeforeRecord,
      keeps: () => this.#keeps,
      tellQueued: () => this.#tellQueued(),
      parked: () => this.#armWaitingTimer(),
    });
    this.#batches = deps.store.caps.skipLocked
      ? new PureBatches({
          queue: deps.queue,
          engine: this.#engine,
          runner: this.#runner,
          workflow: (id, version) => this.#finished.workflow(id, version),
          log: deps.log,
        })
      : undefined;
    // Executions a claim skipped (newest wins) finished without running: whoever waits is told.
    deps.queue.onSkipped((rows) => {
      for (const row of rows) void this.#finished.published(row.id, row.status);
    });
    // Executions the queue fails itself (every attempt crashed) alert like any other failure.
    deps.queue.onGaveUp((rows, error) => {
      for (const row of rows) {
        void this.#finished.workflow(row.workflow_id, row.workflow_version).then(
          (workflow) => this.#finished.failed(row, workflow, error),
          (err) => deps.log.error({ err, executionId: row.id }, 'starting the error workflow failed'),
        );
        void this.#finished.ended(row);
      }
    });
  }

  /** Executions in flight here (the /metrics gauge): started and not yet recorded. */
  get active(): number {
    return this.#running.size;
  }

  get mode(): WorkerMode {
    return this.#mode;
  }

  get workerId(): string {
    return this.#deps.queue.workerId;
  }

  get leaseMs(): number {
    return this.#deps.queue.leaseMs;
  }

  #to(mode: WorkerMode): void {
    if (!TRANSITIONS[this.#mode].includes(mode))
      throw new Error(`Worker: no transition from ${this.#mode} to ${mode}`);
    this.#mode = mode;
  }

  /**
   * The one entry of new executions (queue/entry.ts): decides how `offer.row` runs, has it written
   * as that (claimed by this worker, or finished by a run before the commit), and then starts,
   * announces or queues it. The rules, in order:
   * - a pure workflow runs before its commit: here, in a short slice (queue/pure-run.ts); one
   *   that does not fit is stored queued. Nobody outside can tell: until the commit nothing
   *   happened (a crash leaves no trace and no effect), and `execution.finished` is announced
   *   after it. It does not wait for executions queued earlier (a backlog), as it once did: it
   *   has no effect anyone could see in another order, and while a backlog lasted every
   *   new execution joined it, so under steady load it never ended and every pure execution went
   *   through the store and the engine thread (a bench round at 0.39× of the durable floor;
   *   test/executions/pure-run.int.test.ts, "executions waiting in the store").
   * - otherwise, with room for it here (`#reserve`), it is stored claimed by this worker (a new
   *   row: the claim's fields over the offered one) and started after the commit (a crash loses
   *   nothing: a `running` row of a dead process is claimed again, lease lapse or next embedded
   *   start);
   * - otherwise it is stored queued, and the workers are told.
   */
  async offer({ workflow, row, item, write }: Offer): Promise<Offered> {
    // An execution with a concurrency key starts in its key's turn (Queue.claim), never here.
    const keyed = row.concurrency_key != null;
    const pure =
      !keyed &&
      this.#deps.runPure !== false &&
      this.#mode === 'running' &&
      this.#engine.runsBeforeCommit(workflow);
    if (pure) {
      const ran = runPure(this.#engine, workflow, row, item, (err) =>
        this.#finished.crashed(err, row.id, workflow.id),
      );
      if (isPromise(ran)) await ran;
    }
    const bytes = row.trigger.length;
    const claimed: ExecutionRow | undefined =
      !pure && !keyed && this.#reserve(bytes)
        ? ({ ...row, ...claimFields(this.workerId, this.leaseMs, this.#clock.now()) } as ExecutionRow)
        : undefined;
    try {
      await write(claimed ?? row);
    } finally {
      if (claimed) {
        this.#holding.reserved--;
        this.#holding.readyBytes -= bytes;
      }
    }
    if (claimed) {
      this.#enqueue([claimed]);
      return 'claimed';
    }
    // Run before its commit (or stored queued: it did not fit in its slice).
    if (row.status !== 'queued') {
      this.#finished.announce(row, { here: true });
      return 'ran';
    }
    this.#tellQueued();
    return 'queued';
  }

  /** Executions are due in the store: every worker is told, or, alone on the store, this one (slots.ts). */
  #tellQueued(): void {
    if (this.#slots.tellQueued === 'everyone') this.#deps.notice.send();
    else this.poke();
  }

  /** Room for one more handed-over execution of `bytes` of trigger JSON (slots.ts `admits`). */
  #reserve(bytes: number): boolean {
    if (this.#mode !== 'running' || this.#backlog || !this.#slots.admits(this.#holding, bytes)) {
      // The row goes to the store as queued: later ones must not overtake it. During a backlog
      // that is not news: claims are asynchronous (on SQLite, group-commit transactions), and
      // counting every row queued meanwhile (`#backlogSeq`) kept any claim from ending the backlog
      // for as long as requests kept coming, each of them stored queued and run by the executor
      // (the same as for pure runs, see `offer`). Such a row is claimed by the poke after its
      // commit (`offer`); executions handed over meanwhile may start first.
      if (!this.#backlog) this.#markBacklog();
      return false;
    }
    this.#holding.reserved++;
    this.#holding.readyBytes += bytes;
    return true;
  }

  #markBacklog(): void {
    this.#backlog = true;
    this.#backlogSeq++;
  }

  /** Claimed or handed-over rows: started at once while under the in-flight cap, else they wait. */
  #enqueue(rows: readonly ExecutionRow[]): void {
    for (const row of rows) {
      this.#ready.push(row);
      this.#holding.readyBytes += row.trigger.length;
    }
    this.#holding.ready = this.#ready.length;
    this.#startReady();
  }

  /** Start waiting executions while the slot policy lets more in flight. */
  #startReady(): void {
    while (this.#ready.length > 0 && this.#slots.canStart(this.#holding, this.#ready[0]!.trigger.length)) {
      const row = this.#ready.shift()!;
      this.#holding.readyBytes -= row.trigger.length;
      this.#start(row);
    }
    this.#holding.ready = this.#ready.length;
  }

  #start(row: ExecutionRow): void {
    const bytes = row.trigger.length;
    this.#holding.inFlight++;
    this.#holding.inFlightBytes += bytes;
    let slot = true;
    const freeSlot = () => {
      if (!slot) return;
      slot = false;
      this.#holding.inFlight--;
      this.#holding.inFlightBytes -= bytes;
      this.#startReady();
      if (this.#backlog) this.poke();
    };
    const done = this.#executions.run(row, freeSlot).finally(() => {
      freeSlot();
      this.#running.delete(row.id);
    });
    this.#running.set(row.id, done);
  }

  async start(): Promise<void> {
    this.#to('starting');
    if (this.#slots.ownsRunningRows) {
      const released = await this.#deps.queue.releaseAbandoned();
      if (released > 0)
        this.#deps.log.warn({ released }, 'resuming executions interrupted by a previous stop');
    }
    if (this.#mode !== 'starting') return;
    this.#to('running');
    const queued = this.#deps.bus.subscribe('execution.queued', () => {
      this.#markBacklog();
      this.poke();
    });
    // A changed or deleted credential's database connections are closed (engine/steps/sql.ts).
    const credentials = this.#deps.bus.subscribe('credential.changed', ({ credentialId }) => {
      this.#runner.forgetCredential(credentialId);
    });
    this.#unsubscribe = () => {
      queued();
      credentials();
    };
    this.#cancelPoll = this.#clock.setInterval(() => this.poke(), POLL_MS);
    this.#cancelHeartbeat = this.#clock.setInterval(() => this.#beat(), this.#deps.queue.leaseMs / 3);
    this.poke();
  }

  /** Renews the lease of every execution this worker holds: in flight, or waiting to start. */
  #beat(): void {
    const ids = [...this.#running.keys(), ...this.#ready.map((r) => r.id)];
    if (ids.length === 0) return;
    this.#deps.queue.heartbeat(ids).catch((err) => this.#deps.log.error({ err }, 'lease heartbeat failed'));
  }

  /** Claim and start as many executions as there is room for. */
  poke(): void {
    if (this.#mode !== 'running') return;
    if (this.#filling) {
      this.#again = true;
      return;
    }
    this.#filling = this.#fill().finally(() => {
      this.#filling = undefined;
      if (this.#again) {
        this.#again = false;
        this.poke();
      }
    });
  }

  async #fill(): Promise<void> {
    try {
      while (this.#mode === 'running') {
        this.#startReady();
        if (this.#batches) {
          if (await this.#fillBatch()) continue;
          return;
        }
        const room = this.#slots.claimRoom(this.#holding);
        if (room <= 0) return;
        const maxChars = this.#slots.claimMaxChars(this.#holding);
        const seq = this.#backlogSeq;
        const rows = await this.#deps.queue.claim(room, { maxChars });
        this.#enqueue(rows);
        // Fewer rows than asked for, and not for the size cap: none was left behind.
        if (rows.length < room && (maxChars === undefined || chars(rows) < maxChars)) {
          if (seq === this.#backlogSeq) this.#backlog = false;
          return;
        }
      }
    } catch (err) {
      this.#deps.log.error({ err }, 'claiming executions failed');
    } finally {
      this.#armWaitingTimer();
    }
  }

  /**
   * One round on PostgreSQL (pure-batch.ts): its pure rows are finished when it returns
   * (committed; announced here), the rows it claimed start at once. Pure rows need no slot, so a
   * batch runs even when the worker holds all it may. Returns whether to take the next round at once.
   */
  async #fillBatch(): Promise<boolean> {
    const seq = this.#backlogSeq;
    const round = await this.#batches!.round({
      free: () => this.#slots.claimRoom(this.#holding),
      compute: this.#deps.concurrency,
      holds: (id) => this.#running.has(id) || this.#ready.some((r) => r.id === id),
      adopt: (rows) => this.#enqueue(rows),
    });
    for (const row of round.finished) this.#finished.announce(row);
    // Rows left queued for want of room keep the backlog: a freed slot pokes for them.
    if (round.drained && seq === this.#backlogSeq) this.#backlog = false;
    return round.again && this.#mode === 'running';
  }

  /**
   * A timer for the next waiting execution the queue knows of, so that it resumes on time even on
   * an idle worker (the poll would be up to POLL_MS late; one that is longer than a day away is
   * left to the polls that come before it).
   */
  #armWaitingTimer(): void {
    const at = this.#deps.queue.waitingDueAt;
    if (this.#mode !== 'running' || at === this.#waitingTimerAt) return;
    this.#cancelWaitingTimer?.();
    this.#cancelWaitingTimer = undefined;
    this.#waitingTimerAt = at;
    const delay = at - this.#clock.now();
    if (!Number.isFinite(at) || delay > 86_400_000) return;
    this.#cancelWaitingTimer = this.#clock.setTimeout(
      () => {
        this.#cancelWaitingTimer = undefined;
        this.#waitingTimerAt = Number.POSITIVE_INFINITY;
        this.poke();
      },
      Math.max(0, delay),
    );
  }

  /** Whether this worker still runs what it holds (not past its close deadline). */
  get #keeps(): boolean {
    return this.#mode !== 'releasing' && this.#mode !== 'stopped';
  }

  /**
   * A deploy loses no work (SPEC 7d): claim nothing more, let what this worker holds finish until
   * `deadlineMs` (heartbeats go on meanwhile), then give what is left back to the queue as after a
   * crash — `queued` as its next attempt, claimed at once by another worker or the next start —
   * and stop the engine thread under it. Nothing is failed for the stop: an outbound call cut off
   * is sent again by the next attempt, with the same Idempotency-Key.
   */
  close(deadlineMs = 10_000): Promise<void> {
    this.#closed ??= this.#close(deadlineMs);
    return this.#closed;
  }

  async #close(deadlineMs: number): Promise<void> {
    this.#to('draining');
    this.#unsubscribe?.();
    this.#cancelPoll?.();
    this.#cancelWaitingTimer?.();
    let cancelDeadline: Cancel | undefined;
    const deadline = new Promise<true>((resolve) => {
      cancelDeadline = this.#clock.setTimeout(() => resolve(true), deadlineMs);
    });
    // A claim or batch in progress commits (or rolls back) first: what it claimed is run below.
    await Promise.race([this.#filling, deadline]);
    let late = false;
    while (this.#running.size > 0 || this.#ready.length > 0) {
      this.#startReady();
      const all = Promise.allSettled([...this.#running.values()]).then(() => false);
      if (await Promise.race([all, deadline])) {
        late = true;
        break;
      }
    }
    cancelDeadline?.();
    if (late && (this.#running.size > 0 || this.#ready.length > 0)) {
      this.#to('releasing');
      const held = this.#running.size + this.#ready.length;
      this.#ready.length = 0;
      this.#holding.ready = 0;
      try {
        const released = await this.#deps.queue.releaseHeld();
        this.#deps.log.warn(
          { held, released },
          'stopping: executions still running at the drain deadline go back to the queue and run again',
        );
      } catch (err) {
        this.#deps.log.error(
          { err, held },
          'releasing executions failed: they run again when their leases lapse',
        );
      }
    }
    this.#cancelHeartbeat?.();
    this.#to('stopped');
    // Connections of executions still running are cut; they run again as their next attempt.
    await this.#engine
      .close()
      .catch((err) => this.#deps.log.warn({ err }, 'closing outbound connections failed'));
    await this.#runner
      .close()
      .catch((err) => this.#deps.log.warn({ err }, 'closing the engine thread failed'));
    await Promise.allSettled([...this.#running.values()]);
  }
}
