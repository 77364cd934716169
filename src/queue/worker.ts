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
 */
import type { Logger } from 'pino';
import { Engine, type RunResult } from '../engine/run.js';
import type { ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import type { Workflow } from '../workflows/model.js';
import type { Bus } from './bus.js';
import type { Queue } from './queue.js';

const POLL_MS = 1_000;

export interface WorkerDeps {
  store: Store;
  queue: Queue;
  bus: Bus;
  log: Logger;
  concurrency: number;
  /** config.engine: the private-network switch and the time budget of one execution. */
  engine: { allowPrivateNetwork: boolean; executionTimeoutMs: number };
}

export class Worker {
  readonly #deps: WorkerDeps;
  readonly #engine: Engine;
  readonly #running = new Map<string, Promise<void>>();
  readonly #versions = new Map<string, Workflow>();
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #claiming = false;
  #again = false;
  #stopped = true;

  constructor(deps: WorkerDeps) {
    this.#deps = deps;
    this.#engine = new Engine(deps.engine);
  }

  get active(): number {
    return this.#running.size;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    if (!this.#deps.store.caps.shared) {
      const released = await this.#deps.queue.releaseAbandoned();
      if (released > 0)
        this.#deps.log.warn({ released }, 'resuming executions interrupted by a previous stop');
    }
    this.#unsubscribe = this.#deps.bus.subscribe('execution.queued', () => this.poke());
    this.#timer = setInterval(() => this.poke(), POLL_MS);
    this.#timer.unref();
    this.#heartbeat = setInterval(() => {
      this.#deps.queue
        .heartbeat([...this.#running.keys()])
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
    void this.#fill().finally(() => {
      this.#claiming = false;
      if (this.#again) {
        this.#again = false;
        this.poke();
      }
    });
  }

  async #fill(): Promise<void> {
    try {
      while (!this.#stopped) {
        const room = this.#deps.concurrency - this.#running.size;
        if (room <= 0) return;
        const rows = await this.#deps.queue.claim(room);
        for (const row of rows) {
          const done = this.#execute(row).finally(() => {
            this.#running.delete(row.id);
            this.poke();
          });
          this.#running.set(row.id, done);
        }
        if (rows.length < room) return;
      }
    } catch (err) {
      this.#deps.log.error({ err }, 'claiming executions failed');
    }
  }

  async #execute(row: ExecutionRow): Promise<void> {
    const log = this.#deps.log.child({ executionId: row.id, workflowId: row.workflow_id, mode: row.mode });
    let result: RunResult;
    try {
      const workflow = await this.#workflow(row.workflow_id, row.workflow_version);
      if (!workflow) {
        result = failed(`Workflow ${row.workflow_id} version ${row.workflow_version} no longer exists.`);
      } else {
        result = await this.#engine.run(workflow, JSON.parse(row.trigger), {
          executionId: row.id,
          mode: row.mode,
          attempt: row.attempt,
        });
      }
    } catch (err) {
      log.error({ err }, 'execution crashed');
      result = failed(err instanceof Error ? err.message : String(err));
    }
    if (result.status === 'failed') log.info({ error: result.error }, 'execution failed');
    else log.debug({ status: result.status, steps: result.steps.length }, 'execution finished');
    let recorded: boolean;
    try {
      recorded = await this.#deps.queue.complete(row.id, result);
    } catch (err) {
      log.error({ err }, 'recording the execution result failed');
      // Run it again after a backoff; if even that cannot be written, the lease lapses instead.
      const next = await this.#deps.queue
        .retryLater(row.id, row.attempt, err instanceof Error ? err.message : String(err))
        .catch(() => 'left to its lease');
      log.warn({ attempt: row.attempt, next }, 'execution result not recorded');
      return;
    }
    // Not recorded: this worker's lease lapsed and another worker runs the execution now.
    if (!recorded) log.warn({ attempt: row.attempt }, 'lease lost; the result of this attempt was discarded');
    else
      await this.#deps.bus
        .publish('execution.finished', { executionId: row.id, status: result.status })
        .catch((err) => log.error({ err }, 'announcing the finished execution failed'));
  }

  async #workflow(id: string, version: number): Promise<Workflow | undefined> {
    const key = `${id}@${version}`;
    let workflow = this.#versions.get(key);
    if (!workflow) {
      workflow = await workflowsRepo.getVersion(this.#deps.store.db, id, version);
      // Versions never change once saved, so caching them is safe; the cap bounds memory.
      if (workflow) {
        if (this.#versions.size > 1000) this.#versions.clear();
        this.#versions.set(key, workflow);
      }
    }
    return workflow;
  }

  /** Take no new executions; wait for running ones (their leases keep them safe if we are killed). */
  async close(deadlineMs = 10_000): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearInterval(this.#timer);
    clearInterval(this.#heartbeat);
    const all = Promise.allSettled([...this.#running.values()]);
    await Promise.race([all, new Promise((r) => setTimeout(r, deadlineMs).unref())]);
    // Connections of executions still running after the deadline are cut; their leases lapse and
    // another process (or the next start) runs them again.
    await this.#engine
      .close()
      .catch((err) => this.#deps.log.warn({ err }, 'closing outbound connections failed'));
  }
}

const failed = (message: string): RunResult => ({
  status: 'failed',
  steps: [],
  error: { message },
  output: null,
});
