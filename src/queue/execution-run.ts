/**
 * One claimed or handed-over execution, from start to recorded result: its version, credentials,
 * variables and checkpoint are read, the engine thread runs it (engine-runner.ts), its result is
 * recorded (retried while the store is briefly out of service), and what follows a finish is
 * told (finished.ts). The Worker (worker.ts) decides what runs and when; this says how one runs.
 */
import type { Logger } from 'pino';
import type { Bus, StepResponse } from '../bus/bus.js';
import { checkpointJson } from '../engine/checkpoint.js';
import type { RunCredentials } from '../engine/credentials.js';
import type { Engine, RunResult } from '../engine/run.js';
import type { RunVariables } from '../engine/types.js';
import type { Workflow } from '../model/workflow.js';
import { type Clock, sleep } from '../shared/clock.js';
import { executionsRepo } from '../store/executions.js';
import type { ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { type EngineRunner, EngineThreadLost } from './engine-runner.js';
import type { Finished } from './finished.js';
import { failedRun } from './pure-run.js';
import type { Queue } from './queue.js';

/** Retrying a result the store could not take: 250 ms doubling to 2 s (see `#record`). */
const RECORD_RETRY_MIN_MS = 250;
const RECORD_RETRY_MAX_MS = 2_000;

/** Early responses travel as bus notices: PostgreSQL's NOTIFY carries under 8000 bytes. */
const MAX_EARLY_RESPONSE_CHARS = 6_000;

export interface ExecutionRunDeps {
  store: Store;
  queue: Queue;
  bus: Bus;
  log: Logger;
  clock: Clock;
  engine: Engine;
  runner: EngineRunner;
  finished: Finished;
  credentials?: { forRun(steps: readonly unknown[]): Promise<RunCredentials | undefined> } | undefined;
  variables?: { forRun(): Promise<RunVariables> } | undefined;
  /** The slot policy's `freeBeforeRecord` (slots.ts). */
  freeBeforeRecord: boolean;
  /** Whether the worker still runs what it holds (false past its close deadline: released to the queue). */
  keeps: () => boolean;
  /** A key's turn passed on: executions are due in the store (the worker tells whoever claims). */
  tellQueued: () => void;
  /** An execution was parked `waiting`: the worker arms its timer for the next due one. */
  parked: () => void;
}

export class ExecutionRun {
  readonly #deps: ExecutionRunDeps;

  constructor(deps: ExecutionRunDeps) {
    this.#deps = deps;
  }

  /**
   * Runs one execution and records its result. `freeSlot` gives its place in flight to the next
   * one: once the engine is done or once the result is recorded, as the slot policy says
   * (slots.ts `freeBeforeRecord`).
   */
  async run(row: ExecutionRow, freeSlot: () => void): Promise<void> {
    // The child logger only when there is something to log: making one per execution was ~3 % of
    // the executor's time for executions that log nothing.
    let child: Logger | undefined;
    const log = () =>
      (child ??= this.#deps.log.child({ executionId: row.id, workflowId: row.workflow_id, mode: row.mode }));
    let result: RunResult;
    let workflow: Workflow | undefined;
    try {
      workflow = await this.#deps.finished.workflow(row.workflow_id, row.workflow_version);
      if (!workflow) {
        result = failedRun(`Workflow ${row.workflow_id} version ${row.workflow_version} no longer exists.`);
      } else {
        // Off the event loop, from the stored JSON: the engine thread parses it (copying a parsed
        // item to the thread would cost the event loop more). A resumed execution goes on from its
        // checkpoint: its head and its parts, as stored (the runner's thread parses them).
        const credentials = await this.#deps.credentials?.forRun(workflow.steps);
        const variables = this.#deps.engine.usesVariables(workflow)
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
        // Past the close deadline: it was released to the queue (`close`).
        if (!this.#deps.keeps()) return;
        result = await this.#deps.runner.run(workflow, row.trigger, {
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
      // Cut off by a close past its deadline: released to the queue, the next attempt runs it.
      if (!this.#deps.keeps()) return;
      if (err instanceof EngineThreadLost) return this.#runAgain(row, workflow, err, log);
      log().error({ err }, 'execution crashed');
      result = failedRun(err instanceof Error ? err.message : String(err));
    }
    if (this.#deps.freeBeforeRecord) freeSlot();
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
        await this.#deps.finished.failed(row, workflow, next.failed);
        await this.#deps.finished.ended(row);
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
    else if (result.status === 'waiting') this.#deps.parked();
    else {
      // Its key's turn passes to the next execution of the key: claim it now, not at the next poll
      // (on a shared store any worker may have the room, so all are told).
      if (row.concurrency_key != null) this.#deps.tellQueued();
      if (result.status === 'failed') await this.#deps.finished.failed(row, workflow, result.error);
      await this.#deps.finished.published(row.id, result.status);
      await this.#deps.finished.ended(row);
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
      await this.#deps.finished.failed(row, workflow, next.failed);
      await this.#deps.finished.published(row.id, 'failed');
      await this.#deps.finished.ended(row);
    }
  }

  /**
   * `queue.complete`, retried while the store is out of service (a database restart is a second or
   * two) for as long as the lease would last: the result of a finished execution is kept instead of
   * the execution being run again. If the lease lapsed meanwhile and another worker took the
   * execution over, `complete` says so (false) and that worker's attempt is the one recorded.
   */
  async #record(id: string, result: RunResult, resumed: boolean): Promise<boolean> {
    const giveUpAt = this.#deps.clock.now() + this.#deps.queue.leaseMs;
    for (let delay = RECORD_RETRY_MIN_MS; ; delay = Math.min(delay * 2, RECORD_RETRY_MAX_MS)) {
      try {
        return await this.#deps.queue.complete(id, result, { resumed });
      } catch (err) {
        if (!isStoreUnavailable(err) || this.#deps.clock.now() + delay > giveUpAt) throw err;
        await sleep(this.#deps.clock, delay);
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
}
