/**
 * The executor loop of one process: claims due executions from the queue, runs them with the
 * engine (bounded concurrency), records the results and announces completions on the bus.
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
import { checkpointJson } from '../engine/checkpoint.js';
import type { RunCredentials, TokenSource } from '../engine/credentials.js';
import type { RunVariables } from '../engine/types.js';
import { Engine, type RunResult } from '../engine/run.js';
import { isPromise } from '../shared/maybe-promise.js';
import { executionsRepo } from '../store/executions.js';
import type { ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Workflow } from '../model/workflow.js';
import type { Bus, StepResponse } from '../bus/bus.js';
import type { ExecutionEntry, Offer, Offered, QueuedNotice } from './entry.js';
import { StoredFiles } from './engine-files.js';
import { EngineRunner, type EngineRunnerOptions, EngineThreadLost } from './engine-runner.js';
import { type FailedExecution, Finished } from './finished.js';
import { PureBatches } from './pure-batch.js';
import { failedRun, runPure } from './pure-run.js';
import { chars, claimFields, type Queue, unclaimed } from './queue.js';

const POLL_MS = 1_000;

/** Retrying a result the store could not take: 250 ms doubling to 2 s (see `#record`). */
const RECORD_RETRY_MIN_MS = 250;
const RECORD_RETRY_MAX_MS = 2_000;

/** Early responses travel as bus notices: PostgreSQL's NOTIFY carries under 8000 bytes. */
const MAX_EARLY_RESPONSE_CHARS = 6_000;

/**
 * Executions handed over by `offer` (stored claimed by this worker) wait here for a free
 * slot: as many again as run at once, when this process owns the store (embedded SQLite); on a
 * shared store none wait, since waiting rows are `running` rows held by this worker (see `#held`). Pure workflows never get here (they run before the commit),
 * so these wait on the network, and a longer line would only be rows claimed by this process that
 * others cannot take and a crash leaves `running` (with 256 here, recovery after a SIGKILL under
 * load took 15 s). Beyond it, new executions go through the store. Only items under 64 KiB of
 * JSON are taken (at most 4 MiB in all); bigger ones are read back from the store in their turn.
 */
const ADOPT_PER_SLOT = 2;
const ADOPT_MAX_ITEM_BYTES = 64 * 1024;
const ADOPT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Alone on its store (SQLite), a claim takes up to this many rows per slot, as long as the rows
 * waiting here hold less than ADOPT_MAX_BYTES of trigger JSON (the claim's own cap, store/queue.ts
 * claimDue), so a backlog of big items is not read into memory at once. Each claim is a group
 * commit transaction: a backlog of 20 000 routed executions (the bench's switch + code step),
 * stored queued before the start, drained at 2 080–2 230 executions/s with 2 per slot and at
 * 2 450–3 600/s with 8 (alternated, three runs each; the bench's routed backlog earlier: 3.4–3.8k
 * → 5.0k/s, and 4 per slot changed nothing). A restart releases every `running` row there at
 * once, so a longer line costs recovery nothing.
 */
const CLAIM_PER_SLOT = 8;

export interface WorkerDeps {
  store: Store;
  queue: Queue;
  bus: Bus;
  /** Tells the workers (this one too) that executions were stored queued. */
  notice: QueuedNotice;
  log: Logger;
  concurrency: number;
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
}

export class Worker implements ExecutionEntry {
  readonly #deps: WorkerDeps;
  readonly #engine: Engine;
  /** Runs claimed and handed-over executions off the event loop (engine-runner.ts). */
  readonly #runner: EngineRunner;
  readonly #running = new Map<string, Promise<void>>();
  readonly #finished: Finished;
  /** Handed-over executions waiting for a slot, and the reservations ingest holds for more. */
  readonly #ready: { row: ExecutionRow; item?: unknown }[] = [];
  #readyBytes = 0;
  #reserved = 0;
  /**
   * Executions holding a slot: in the engine, and on a shared store until their result is recorded
   * (see `#execute`).
   */
  #busy = 0;
  /** Whether other processes share the store (PostgreSQL): see `#held` and `#execute`. */
  readonly #shared: boolean;
  /** PostgreSQL: queued rows are taken in batches, pure ones run in the batch (pure-batch.ts). */
  readonly #batches: PureBatches | undefined;
  /** The claim or batch in progress (`poke`), which `close` lets finish. */
  #filling: Promise<void> | undefined;
  /**
   * Due executions may wait in the store (queued by a full executor, by retry/replay, by another
   * process, or left by a previous run): hand-over pauses so they are claimed first, in order
   * (pure runs do not wait: see `offer`). Cleared by a claim that finds fewer rows than it asked
   * for; `#backlogSeq` keeps a claim that began before news of a backlog (a notice, or the first
   * row this worker could not take) from clearing it.
   */
  #backlog = true;
  #backlogSeq = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Wakes the worker when the next waiting execution it knows of is due (`#armWaitingTimer`). */
  #waitingTimer: NodeJS.Timeout | undefined;
  #waitingTimerAt = Number.POSITIVE_INFINITY;
  #heartbeat: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #claiming = false;
  #again = false;
  #stopped = true;

  constructor(deps: WorkerDeps) {
    this.#deps = deps;
    this.#engine = new Engine(deps.engine);
    this.#finished = new Finished(deps);
    this.#runner = new EngineRunner({
      options: deps.engine,
      log: deps.log,
      files: new StoredFiles(deps.store),
      tokens: deps.tokens,
      services: deps.services,
    });
    this.#shared = deps.store.caps.shared;
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

  get active(): number {
    return this.#running.size;
  }

  get workerId(): string {
    return this.#deps.queue.workerId;
  }

  get leaseMs(): number {
    return this.#deps.queue.leaseMs;
  }

  /**
   * The one entry of new executions (queue/entry.ts): decides how `offer.row` runs, fills it in
   * for that (claimed by this worker, or finished by a run before the commit), has it written,
   * and then starts, announces or queues it. The rules, in order:
   * - a pure workflow runs before its commit: here, in a short slice (queue/pure-run.ts); one
   *   that does not fit is stored queued. Nobody outside can tell: until the commit nothing
   *   happened (a crash leaves no trace and no effect), and `execution.finished` is announced
   *   after it. It does not wait for executions queued earlier (a backlog), as it once did: it
   *   has no effect anyone could see in another order, and while a backlog lasted every
   *   new execution joined it, so under steady load it never ended and every pure execution went
   *   through the store and the engine thread (a bench round at 0.39× of the durable floor;
   *   test/executions/pure-run.int.test.ts, "executions waiting in the store").
   * - otherwise, with room for it here (`#reserve`), it is stored claimed by this worker and
   *   started after the commit with its item in memory (a crash loses nothing: a `running` row of
   *   a dead process is claimed again, lease lapse or next embedded start);
   * - otherwise it is stored queued, and the workers are told.
   */
  async offer({ workflow, row, item, write }: Offer): Promise<Offered> {
    // An execution with a concurrency key starts in its key's turn (Queue.claim), never here.
    const keyed = row.concurrency_key != null;
    const pure =
      !keyed && this.#deps.runPure !== false && !this.#stopped && this.#engine.runsBeforeCommit(workflow);
    if (pure) {
      const ran = runPure(this.#engine, workflow, row, item, (err) =>
        this.#finished.crashed(err, row.id, workflow.id),
      );
      if (isPromise(ran)) await ran;
    }
    const bytes = row.trigger.length;
    const claimed = !pure && !keyed && this.#reserve(bytes);
    if (claimed) Object.assign(row, claimFields(this.workerId, this.leaseMs, Date.now()));
    try {
      await write();
    } catch (err) {
      if (claimed) {
        this.#reserved--;
        this.#readyBytes -= bytes;
        Object.assign(row, unclaimed());
      }
      throw err;
    }
    // Run before its commit (or stored queued: it did not fit in its slice).
    if (row.status !== 'queued' && row.status !== 'running') {
      this.#finished.announce(row, { here: true });
      return 'ran';
    }
    if (claimed) {
      this.#reserved--;
      this.#ready.push({ row: row as ExecutionRow, item });
      this.#startReady();
      return 'claimed';
    }
    // On a shared store every worker is told. Alone on its store, this worker is the only one to
    // tell, and it is poked directly: a notice would also count as news of a backlog
    // (`#backlogSeq`; see `#reserve`).
    if (this.#shared) this.#deps.notice.send();
    else this.poke();
    return 'queued';
  }

  /**
   * How many rows one claim takes. On a shared store (PostgreSQL) the free slots only: every row a
   * worker holds is `running` under its lease, and those are capped at `concurrency`. Alone on
   * its store (SQLite) CLAIM_PER_SLOT per slot, less what waits here: a restart releases every
   * `running` row there, and each claim is a transaction of group commit (queue.ts `#claimDue`).
   * One claim per finished execution took 42 % of the event loop under a backlog (the bench's
   * routed case: 10 500 claims of 0.47 ms in 10 s; 1 000 req/s, p99 1 s).
   */
  #claimRoom(): number {
    const free = this.#deps.concurrency - this.#held;
    if (this.#shared) return free;
    const held = this.#busy + this.#ready.length + this.#reserved;
    return Math.max(free, CLAIM_PER_SLOT * this.#deps.concurrency - held);
  }

  /** Room for one more handed-over execution of `bytes` of trigger JSON (see ADOPT_PER_SLOT). */
  #reserve(bytes: number): boolean {
    if (
      this.#stopped ||
      this.#backlog ||
      bytes > ADOPT_MAX_ITEM_BYTES ||
      this.#busy + this.#ready.length + this.#reserved >=
        (this.#shared ? 1 : ADOPT_PER_SLOT) * this.#deps.concurrency ||
      this.#readyBytes + bytes > ADOPT_MAX_BYTES
    ) {
      // The row goes to the store as queued: later ones must not overtake it. During a backlog
      // that is not news: claims are asynchronous (on SQLite, group-commit transactions), and
      // counting every row queued meanwhile (`#backlogSeq`) kept any claim from ending the backlog
      // for as long as requests kept coming, each of them stored queued and run by the executor
      // (the same as for pure runs, see `offer`). Such a row is claimed by the poke after its
      // commit (`offer`); executions handed over meanwhile may start first.
      if (!this.#backlog) this.#markBacklog();
      return false;
    }
    this.#reserved++;
    this.#readyBytes += bytes;
    return true;
  }

  /**
   * Slots taken, for claiming. On a shared store a claim also leaves room for handed-over rows
   * waiting for a slot or reserved by ingest: they are `running` rows of this worker already, and
   * it holds at most `concurrency` of those (with results recorded after the slot was freed and
   * claims going on meanwhile, 573 rows were `running` on a worker of concurrency 8, and
   * its SIGKILL stranded them all). Alone on its store (SQLite) it claims only when nothing is
   * handed over (`#backlog`), and a restart releases every `running` row at once.
   */
  get #held(): number {
    return this.#shared ? this.#busy + this.#ready.length + this.#reserved : this.#busy;
  }

  #markBacklog(): void {
    this.#backlog = true;
    this.#backlogSeq++;
  }

  /** Start handed-over executions while there are free slots. */
  #startReady(): void {
    while (this.#busy < this.#deps.concurrency && this.#ready.length > 0) {
      const { row, item } = this.#ready.shift()!;
      this.#readyBytes -= row.trigger.length;
      this.#start(row, item);
    }
  }

  #start(row: ExecutionRow, item?: unknown): void {
    this.#busy++;
    let slot = true;
    const freeSlot = () => {
      if (!slot) return;
      slot = false;
      this.#busy--;
      this.#startReady();
      if (this.#backlog) this.poke();
    };
    const done = this.#execute(row, item, freeSlot).finally(() => {
      freeSlot();
      this.#running.delete(row.id);
    });
    this.#running.set(row.id, done);
  }

  async start(): Promise<void> {
    this.#stopped = false;
    if (!this.#deps.store.caps.shared) {
      const released = await this.#deps.queue.releaseAbandoned();
      if (released > 0)
        this.#deps.log.warn({ released }, 'resuming executions interrupted by a previous stop');
    }
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
    this.#timer = setInterval(() => this.poke(), POLL_MS);
    this.#timer.unref();
    this.#heartbeat = setInterval(() => {
      this.#deps.queue
        .heartbeat([...this.#running.keys(), ...this.#ready.map((r) => r.row.id)])
        .catch((err) => this.#deps.log.error({ err }, 'lease heartbeat failed'));
    }, this.#deps.queue.leaseMs / 3);
    this.#heartbeat.unref();
    this.poke();
  }

  /** Claim and start as many executions as there is room for. */
  poke(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = true;
    this.#filling = this.#fill().finally(() => {
      this.#claiming = false;
      this.#filling = undefined;
      if (this.#again) {
        this.#again = false;
        this.poke();
      }
    });
  }

  async #fill(): Promise<void> {
    try {
      while (!this.#stopped) {
        this.#startReady();
        if (this.#batches) {
          if (await this.#fillBatch()) continue;
          return;
        }
        if (this.#deps.concurrency - this.#held <= 0) return;
        const room = this.#claimRoom();
        const maxChars = this.#shared ? undefined : Math.max(1, ADOPT_MAX_BYTES - this.#readyBytes);
        const seq = this.#backlogSeq;
        const rows = await this.#deps.queue.claim(room, { maxChars });
        this.#adopt(rows);
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

  /** Claimed rows: beyond the free slots they wait in `#ready`, started as slots free up. */
  #adopt(rows: readonly ExecutionRow[]): void {
    for (const row of rows) this.#ready.push({ row });
    this.#readyBytes += chars(rows);
    this.#startReady();
  }

  /**
   * One round on PostgreSQL (pure-batch.ts): its pure rows are finished when it returns
   * (committed; announced here), the rows it claimed start at once. Pure rows need no slot, so a
   * batch runs even when every slot is taken. Returns whether to take the next round at once.
   */
  async #fillBatch(): Promise<boolean> {
    const seq = this.#backlogSeq;
    const round = await this.#batches!.round({
      free: () => this.#deps.concurrency - this.#held,
      adopt: (rows) => this.#adopt(rows),
    });
    for (const row of round.finished) this.#finished.announce(row);
    // Rows left queued for want of a slot keep the backlog: a freed slot pokes for them.
    if (round.drained && seq === this.#backlogSeq) this.#backlog = false;
    return round.again && !this.#stopped;
  }

  /**
   * A timer for the next waiting execution the queue knows of, so that it resumes on time even on
   * an idle worker (the poll would be up to POLL_MS late; one that is longer than a day away is
   * left to the polls that come before it).
   */
  #armWaitingTimer(): void {
    const at = this.#deps.queue.waitingDueAt;
    if (this.#stopped || at === this.#waitingTimerAt) return;
    clearTimeout(this.#waitingTimer);
    this.#waitingTimer = undefined;
    this.#waitingTimerAt = at;
    const delay = at - Date.now();
    if (!Number.isFinite(at) || delay > 86_400_000) return;
    this.#waitingTimer = setTimeout(
      () => {
        this.#waitingTimer = undefined;
        this.#waitingTimerAt = Number.POSITIVE_INFINITY;
        this.poke();
      },
      Math.max(0, delay),
    );
    this.#waitingTimer.unref();
  }

  /**
   * Runs one execution and records its result. Alone on its store, `freeSlot` is called once the
   * engine is done, before the result is recorded: the next execution runs during the group commit
   * (what the embedded benchmark measures), and nobody else could claim a row this process holds.
   * On a shared store the slot is freed only once the result is recorded (by the caller), so this
   * worker never holds more than `concurrency` `running` rows: no claims run ahead of recording,
   * and a worker that dies strands at most that many.
   */
  async #execute(row: ExecutionRow, _item: unknown, freeSlot: () => void): Promise<void> {
    // The child logger only when there is something to log: making one per execution was ~3 % of
    // the executor's time for executions that log nothing.
    let child: Logger | undefined;
    const log = () =>
      (child ??= this.#deps.log.child({ executionId: row.id, workflowId: row.workflow_id, mode: row.mode }));
    let result: RunResult;
    let workflow: Workflow | undefined;
    try {
      workflow = await this.#finished.workflow(row.workflow_id, row.workflow_version);
      if (!workflow) {
        result = failedRun(`Workflow ${row.workflow_id} version ${row.workflow_version} no longer exists.`);
      } else {
        // Off the event loop, from the stored JSON: the engine thread parses it (a handed-over
        // `_item` is that JSON parsed; copying it to the thread would cost the event loop more).
        // A resumed execution goes on from its checkpoint: its head and its parts, as stored (the
        // runner's thread parses them).
        const credentials = await this.#deps.credentials?.forRun(workflow.steps);
        const variables = this.#engine.usesVariables(workflow)
          ? await this.#deps.variables?.forRun()
          : undefined;
        let resumeJson: string | undefined;
        if (row.resume_state != null) {
          try {
            const parts = await executionsRepo.checkpointParts(this.#deps.store.db, row.id);
            resumeJson = checkpointJson(row.resume_state, parts);
          } catch (err) {
            // Not a failure of the execution: its lease lapses and the next attempt resumes it.
            log().error(
              { err },
              'reading the checkpoint failed; the execution resumes when its lease lapses',
            );
            return;
          }
        }
        result = await this.#runner.run(workflow, row.trigger, {
          executionId: row.id,
          mode: row.mode,
          attempt: row.attempt,
          ...(credentials ? { credentials } : {}),
          ...(variables ? { variables } : {}),
          ...(resumeJson !== undefined ? { resumeJson } : {}),
          ...(workflow.trigger.type !== 'schedule' && workflow.trigger.response.mode === 'respondStep'
            ? { onRespond: (response: StepResponse) => this.#responded(row.id, response) }
            : {}),
        });
      }
    } catch (err) {
      if (err instanceof EngineThreadLost) return this.#runAgain(row, workflow, err, log);
      log().error({ err }, 'execution crashed');
      result = failedRun(err instanceof Error ? err.message : String(err));
    }
    if (!this.#shared) freeSlot();
    if (result.status === 'failed') log().info({ error: result.error }, 'execution failed');
    else if (result.status === 'waiting') log().info({ resumeAt: result.resumeAt }, 'execution waiting');
    else if (this.#deps.log.isLevelEnabled('debug'))
      log().debug({ status: result.status, steps: result.steps.length }, 'execution finished');
    let recorded: boolean;
    try {
      recorded = await this.#record(row.id, result, row.resume_state != null);
    } catch (err) {
      log().error({ err }, 'recording the execution result failed');
      // Run it again after a backoff; if even that cannot be written, the lease lapses instead.
      const next = await this.#deps.queue
        .retryLater(row.id, row.attempt, err instanceof Error ? err.message : String(err))
        .catch(() => 'left to its lease' as const);
      log().warn(
        { attempt: row.attempt, next: typeof next === 'string' ? next : 'failed' },
        'execution result not recorded',
      );
      if (typeof next === 'object') {
        await this.#finished.failed(row, workflow, next.failed);
        await this.#finished.ended(row);
      }
      return;
    }
    // Recorded (or taken over by another worker): this worker holds the row no more, so its slot is
    // free before the notices (a NOTIFY round trip, and the error workflow's insert) are sent.
    freeSlot();
    // Not recorded: this worker's lease lapsed and another worker runs the execution now.
    if (!recorded)
      log().warn({ attempt: row.attempt }, 'lease lost; the result of this attempt was discarded');
    // Parked, not finished: nothing to announce; the queue knows when it is due.
    else if (result.status === 'waiting') this.#armWaitingTimer();
    else {
      // Its key's turn passes to the next execution of the key: claim it now, not at the next poll
      // (on a shared store any worker may have the room, so all are told).
      if (row.concurrency_key != null) {
        if (this.#shared) this.#deps.notice.send();
        else this.poke();
      }
      if (result.status === 'failed') await this.#finished.failed(row, workflow, result.error);
      await this.#finished.published(row.id, result.status);
      await this.#finished.ended(row);
    }
  }

  /**
   * The engine thread was lost under this execution through no fault of its own (another execution
   * overran its budget, or exhausted the thread's memory: engine-runner.ts): it is queued again as
   * its next attempt, after the queue's backoff, as after a crash; the queue fails it past
   * MAX_ATTEMPTS. If even that cannot be written, its lease lapses and it runs again then.
   */
  async #runAgain(
    row: ExecutionRow,
    workflow: Workflow | undefined,
    lost: EngineThreadLost,
    log: () => Logger,
  ): Promise<void> {
    const next = await this.#deps.queue
      .retryLater(row.id, row.attempt, lost.message)
      .catch((err: unknown) => {
        log().error({ err }, 'queueing the execution again failed');
        return 'left to its lease' as const;
      });
    log().warn({ attempt: row.attempt, next: typeof next === 'string' ? next : 'failed' }, lost.message);
    if (typeof next === 'object') {
      await this.#finished.failed(row, workflow, next.failed);
      await this.#finished.published(row.id, 'failed');
      await this.#finished.ended(row);
    }
  }

  /**
   * `queue.complete`, retried while the store is out of service (a database restart is a second or
   * two) for as long as the lease would last: the result of a finished execution is kept instead of
   * the execution being run again. If the lease lapsed meanwhile and another worker took the
   * execution over, `complete` says so (false) and that worker's attempt is the one recorded.
   */
  async #record(id: string, result: RunResult, resumed: boolean): Promise<boolean> {
    const giveUpAt = Date.now() + this.#deps.queue.leaseMs;
    for (let delay = RECORD_RETRY_MIN_MS; ; delay = Math.min(delay * 2, RECORD_RETRY_MAX_MS)) {
      try {
        return await this.#deps.queue.complete(id, result, { resumed });
      } catch (err) {
        if (!isStoreUnavailable(err) || Date.now() + delay > giveUpAt) throw err;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /**
   * A `respondStep` execution ran its `respond` step: the waiting webhook call can be answered now
   * instead of when the execution ends (a slow step after it no longer delays the caller). A
   * response too big for a bus notice is answered at the end, from the stored execution.
   */
  #responded(executionId: string, response: StepResponse): void {
    if (JSON.stringify(response).length > MAX_EARLY_RESPONSE_CHARS) return;
    this.#deps.bus
      .publish('execution.responded', { executionId, response })
      .catch((err) => this.#deps.log.error({ err, executionId }, 'announcing the response failed'));
  }

  /** Take no new executions; wait for running ones (their leases keep them safe if we are killed). */
  async close(deadlineMs = 10_000): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearInterval(this.#timer);
    clearInterval(this.#heartbeat);
    clearTimeout(this.#waitingTimer);
    // Handed-over executions still waiting are run too: they are claimed by this worker already.
    const deadline = new Promise((r) => setTimeout(r, deadlineMs).unref()).then(() => true);
    // A batch in progress commits (or rolls back) first: what it claimed is run below.
    await Promise.race([this.#filling, deadline]);
    while (this.#running.size > 0 || this.#ready.length > 0) {
      this.#startReady();
      const all = Promise.allSettled([...this.#running.values()]).then(() => false);
      if (await Promise.race([all, deadline])) break;
    }
    // Connections of executions still running after the deadline are cut; their leases lapse and
    // another process (or the next start) runs them again.
    await this.#engine
      .close()
      .catch((err) => this.#deps.log.warn({ err }, 'closing outbound connections failed'));
    await this.#runner
      .close()
      .catch((err) => this.#deps.log.warn({ err }, 'closing the engine thread failed'));
  }
}
