/**
 * Error workflows (SPEC 7c). When a production execution fails and its workflow version names
 * `settings.errorWorkflowId`, an execution of that workflow is queued with mode `error` and the
 * trigger item
 *   {"error": {"message", "step"}, "execution": {"id", "workflowId", "workflowName", "mode",
 *    "attempt"}, "receivedAt"}
 * It runs whether or not the error workflow is active: its published version when it has one
 * (what its owner made live), else its latest saved version. The failed execution records the
 * error execution's id (`errorExecutionId`), written in the same transaction as the new row and
 * only while it has none: a result recorded twice (at-least-once) still starts one. An error
 * execution's own failure starts nothing (the worker only reports production failures), so an
 * error workflow that fails cannot loop. An error workflow deleted since is logged and skipped.
 */
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import { newId, nowIso } from '../ids.js';
import type { FailedExecution } from '../queue/finished.js';
import { searchFieldRows } from '../store/execution-search.js';
import { executionsRepo, queuedExecution, withConcurrency } from '../store/executions.js';
import { concurrencyOf } from '../engine/concurrency.js';
import type { Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';

export interface ErrorWorkflowsDeps {
  store: Store;
  /** Wakes the workers for the execution it queued. */
  bus: Bus;
  log: Logger;
}

export class ErrorWorkflows {
  readonly #deps: ErrorWorkflowsDeps;

  constructor(deps: ErrorWorkflowsDeps) {
    this.#deps = deps;
  }

  /** Queue the error workflow's execution for `failed`; returns its id (undefined when none was started). */
  async start(failed: FailedExecution): Promise<string | undefined> {
    const id = newId();
    const started = await this.#deps.store.transaction(async (trx) => {
      const target = await workflowsRepo.get(trx, failed.errorWorkflowId);
      if (!target) return 'gone' as const;
      const now = nowIso();
      // Started already (this result was recorded before), or the execution is gone (retention).
      if (!(await executionsRepo.linkErrorExecution(trx, failed.id, id))) return 'skip' as const;
      const item = {
        error: {
          message: failed.error?.message ?? 'The execution failed.',
          step: failed.error?.step ?? null,
        },
        execution: {
          id: failed.id,
          workflowId: failed.workflowId,
          workflowName: failed.workflowName,
          mode: failed.mode,
          attempt: failed.attempt,
        },
        receivedAt: now,
      };
      const version = target.publishedVersion ?? target.version;
      // Its searchable fields are those of the version it runs.
      const run =
        version === target.version ? target : await workflowsRepo.getVersion(trx, target.id, version);
      const row = queuedExecution({
        id,
        workflow_id: target.id,
        workflow_version: version,
        mode: 'error',
        trigger: JSON.stringify(item),
        created_at: now,
      });
      // An error workflow may order its executions by key too (e.g. one alert at a time per workflow).
      const concurrency = run?.settings?.concurrency
        ? await concurrencyOf(run.settings.concurrency, item, { id, mode: 'error', workflowId: target.id })
        : undefined;
      await executionsRepo.insert(
        trx,
        concurrency ? withConcurrency(row, concurrency) : row,
        searchFieldRows({ id, workflow_id: target.id }, run?.settings?.searchFields, item),
      );
      return 'started' as const;
    });
    if (started === 'gone') {
      this.#deps.log.warn(
        { executionId: failed.id, errorWorkflowId: failed.errorWorkflowId },
        'the error workflow of this failed execution no longer exists; nothing started',
      );
      return undefined;
    }
    if (started === 'skip') return undefined;
    this.#deps.log.info({ executionId: failed.id, errorExecutionId: id }, 'error workflow started');
    await this.#deps.bus.publish('execution.queued', {});
    return id;
  }
}
