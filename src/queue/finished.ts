/**
 * What follows an execution's finish once it is committed, in whichever process ran it: a failed
 * production run starts its version's error workflow (SPEC 7c), and `execution.finished` tells
 * whoever waits for the result (webhooks/waiter.ts). The executor (Worker) uses it for everything
 * it runs; a process without an executor (`hookflow webhook`) for the pure workflows it runs
 * before their commit (queue/entry.ts).
 */
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import type { Workflow } from '../model/workflow.js';
import type { NewExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { subExecutionsRepo } from '../store/sub-executions.js';
import { workflowsRepo } from '../store/workflows.js';
import { VersionCache } from './versions.js';

/** A recorded failure that starts an error workflow (`onFailed`). */
export interface FailedExecution {
  id: string;
  workflowId: string;
  workflowName: string;
  mode: 'production';
  attempt: number;
  errorWorkflowId: string;
  error: { message?: unknown; step?: unknown } | null;
}

export interface FinishedDeps {
  store: Store;
  bus: Bus;
  log: Logger;
  /**
   * Told once the failure of a production execution whose workflow names an error workflow is
   * recorded (executions/error-workflows.ts queues that workflow's execution).
   */
  onFailed?: ((failed: FailedExecution) => Promise<void>) | undefined;
}

export class Finished {
  readonly #deps: FinishedDeps;
  readonly #versions = new VersionCache();

  constructor(deps: FinishedDeps) {
    this.#deps = deps;
  }

  /** A saved workflow version (kept once read: saved versions never change). */
  async workflow(id: string, version: number): Promise<Workflow | undefined> {
    return (
      this.#versions.cached(id, version) ??
      this.#versions.keep(id, version, await workflowsRepo.getVersion(this.#deps.store.db, id, version))
    );
  }

  /**
   * An execution stored finished (run before its commit, or in a batch): tell of it. `here`: it
   * ran before its commit in the process its request came to, so only this process can be waiting
   * for it (webhooks/waiter.ts), and no notice goes to the others (on PostgreSQL that was one
   * NOTIFY entry an execution, read and dropped by every other process).
   */
  announce(row: NewExecutionRow, { here = false }: { here?: boolean } = {}): void {
    if (row.status === 'failed') {
      this.#deps.log.info({ executionId: row.id, error: row.error }, 'execution failed');
      const error = row.error ? (JSON.parse(row.error) as FailedExecution['error']) : null;
      void this.workflow(row.workflow_id, row.workflow_version).then(
        (workflow) => this.failed(row, workflow, error),
        (err) => this.#deps.log.error({ err, executionId: row.id }, 'starting the error workflow failed'),
      );
    }
    void this.published(row.id, row.status!, here);
    void this.ended(row);
  }

  /**
   * A sub-workflow's execution ended (SPEC 7f): its parent, waiting for it, is due now, on any
   * worker (the parent's step reads the outcome). Told after the end is committed; should this
   * process die in between, the parent's own next look (engine/steps/workflow.ts) finds it.
   * Never throws.
   */
  async ended(row: { id: string; parent_execution_id?: string | null | undefined }): Promise<void> {
    const parent = row.parent_execution_id;
    if (!parent) return;
    try {
      if (await subExecutionsRepo.wake(this.#deps.store.db, parent, new Date().toISOString()))
        await this.#deps.bus.publish('execution.queued', {});
    } catch (err) {
      this.#deps.log.error({ err, executionId: row.id, parent }, 'waking the parent execution failed');
    }
  }

  /** An execution run before its commit crashed the engine (it is stored failed). */
  crashed(err: unknown, executionId: string, workflowId: string): void {
    this.#deps.log.error({ err, executionId, workflowId }, 'execution crashed');
  }

  /** `execution.finished`, for whoever waits for it (never throws). */
  published(executionId: string, status: string, here = false): Promise<void> {
    const bus = this.#deps.bus;
    const payload = { executionId, status };
    return (
      here ? bus.publishHere('execution.finished', payload) : bus.publish('execution.finished', payload)
    ).catch((err) => this.#deps.log.error({ err, executionId }, 'announcing the finished execution failed'));
  }

  /**
   * Error workflows (SPEC 7c): a production execution's failure is recorded; when its version
   * names an error workflow, `onFailed` queues that one's execution (at most once: guarded in the
   * store). Failures of test and error executions start nothing, so an error workflow that fails
   * cannot loop. Never throws: the failure itself is recorded already.
   */
  async failed(
    row: Pick<NewExecutionRow, 'id' | 'workflow_id' | 'mode' | 'attempt'>,
    workflow: Workflow | undefined,
    error: FailedExecution['error'],
  ): Promise<void> {
    const errorWorkflowId = workflow?.settings?.errorWorkflowId;
    if (row.mode !== 'production' || !workflow || !errorWorkflowId || !this.#deps.onFailed) return;
    await this.#deps
      .onFailed({
        id: row.id,
        workflowId: row.workflow_id,
        workflowName: workflow.name,
        mode: 'production',
        attempt: row.attempt ?? 1,
        errorWorkflowId,
        error,
      })
      .catch((err) =>
        this.#deps.log.error(
          { err, executionId: row.id, errorWorkflowId },
          'starting the error workflow failed',
        ),
      );
  }
}
