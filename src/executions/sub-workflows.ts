/**
 * Sub-workflows (SPEC 7f): a `workflow` step starts an execution of another workflow, mode `sub`,
 * with the item `{"body": <input>, "parent": {"executionId", "workflowId", "step"}}`. It runs the
 * target's published version, or its draft when the chain was started in test mode (a test run
 * never reaches published behaviour, nor a draft production); the target need not be active.
 *
 * Once per parent step: the child row names its parent execution and the step (with its forEach
 * indices) under a unique index, so a step run again — a crashed worker's attempt run anew, a
 * resumed wait — finds the child it started instead of starting another.
 *
 * A waiting parent (engine/steps/workflow.ts parks it) is made due when its child ends
 * (queue/finished.ts `ended`, in whichever process records the end); it then reads the child's
 * outcome here. Depth: at most MAX_DEPTH parents above an execution.
 */
import type { Bus } from '../bus/bus.js';
import type { SubWorkflowRequest, SubWorkflowState } from '../engine/services.js';
import { ServiceRefusal } from '../engine/services.js';
import { newId, nowIso } from '../ids.js';
import { searchFieldRows } from '../store/execution-search.js';
import { executionsRepo, queuedExecution } from '../store/executions.js';
import type { Store } from '../store/store.js';
import { subExecutionsRepo } from '../store/sub-executions.js';
import { workflowsRepo } from '../store/workflows.js';

/** SPEC 7f: nesting deeper than this fails with `sub_workflow_depth`. */
export const MAX_DEPTH = 10;

/** The `parent_step` of a step at forEach `indices`: `name`, or `name.0.3`. */
export const parentStepKey = (step: string, indices: readonly number[]): string =>
  indices.length === 0 ? step : `${step}.${indices.join('.')}`;

export class SubWorkflows {
  readonly #store: Store;
  readonly #bus: Bus;

  constructor({ store, bus }: { store: Store; bus: Bus }) {
    this.#store = store;
    this.#bus = bus;
  }

  /** The child execution of the request's step: started now, or the one it started before. */
  async start(req: SubWorkflowRequest): Promise<{ executionId: string }> {
    const key = parentStepKey(req.step, req.indices);
    const db = this.#store.db;
    const existing = await subExecutionsRepo.child(db, req.executionId, key);
    if (existing) return { executionId: existing };
    const parent = await subExecutionsRepo.lineage(db, req.executionId);
    const depth = (parent?.depth ?? 0) + 1;
    if (depth > MAX_DEPTH)
      throw new ServiceRefusal(
        `Sub-workflows may nest at most ${MAX_DEPTH} deep: this execution is at depth ${depth - 1} already, so it cannot start another.`,
        { code: 'sub_workflow_depth', field: '/workflowId' },
      );
    const target = await workflowsRepo.get(db, req.targetWorkflowId);
    if (!target)
      throw new ServiceRefusal(`The workflow ${req.targetWorkflowId} does not exist (any more).`, {
        field: '/workflowId',
      });
    const draft = await this.#testChain(req.mode, parent?.parent_execution_id ?? null);
    const version = draft ? target.version : target.publishedVersion;
    if (version == null)
      throw new ServiceRefusal(
        `The workflow "${target.name}" has never been published: production runs its published version. Publish it (it need not be active).`,
        { field: '/workflowId' },
      );
    const run = version === target.version ? target : await workflowsRepo.getVersion(db, target.id, version);
    const id = newId();
    const item = {
      body: req.input ?? null,
      parent: { executionId: req.executionId, workflowId: req.workflowId, step: req.step },
    };
    try {
      await this.#store.transaction(async (trx) => {
        await executionsRepo.insert(
          trx,
          {
            ...queuedExecution({
              id,
              workflow_id: target.id,
              workflow_version: version,
              mode: 'sub',
              trigger: JSON.stringify(item),
              created_at: nowIso(),
            }),
            parent_execution_id: req.executionId,
            parent_step: key,
            depth,
          },
          searchFieldRows({ id, workflow_id: target.id }, run?.settings?.searchFields, item),
        );
      });
    } catch (err) {
      // Started meanwhile by another attempt of the same step (the unique index said no).
      const raced = await subExecutionsRepo.child(db, req.executionId, key);
      if (raced) return { executionId: raced };
      throw err;
    }
    await this.#bus.publish('execution.queued', {});
    return { executionId: id };
  }

  /**
   * Whether the chain runs drafts: a `test` caller does, and so does every `sub` execution below
   * one (found by walking up, at most MAX_DEPTH rows).
   */
  async #testChain(mode: string, grandparent: string | null): Promise<boolean> {
    if (mode !== 'sub') return mode === 'test';
    let next = grandparent;
    for (let i = 0; next && i <= MAX_DEPTH; i++) {
      const row = await subExecutionsRepo.lineage(this.#store.db, next);
      if (!row) return false;
      if (row.mode !== 'sub') return row.mode === 'test';
      next = row.parent_execution_id;
    }
    return false;
  }

  /** Where a child stands: `running` until it ends; then its last output, or its error. */
  async state(executionId: string): Promise<SubWorkflowState> {
    const row = await subExecutionsRepo.outcome(this.#store.db, executionId);
    if (!row)
      return {
        status: 'failed',
        error: {
          message: `The sub-workflow execution ${executionId} no longer exists (deleted by retention?).`,
        },
      };
    switch (row.status) {
      case 'failed': {
        const error = row.error ? (JSON.parse(row.error) as { message?: unknown; code?: unknown }) : {};
        return {
          status: 'failed',
          error: {
            message: typeof error.message === 'string' ? error.message : 'The sub-workflow execution failed.',
            ...(typeof error.code === 'string' ? { code: error.code } : {}),
          },
        };
      }
      case 'succeeded':
      case 'filtered':
      case 'skipped' as string: {
        const steps = JSON.parse(row.steps) as { output?: unknown }[];
        return {
          status: 'succeeded',
          output: steps.length > 0 ? (steps[steps.length - 1]!.output ?? null) : null,
        };
      }
      default:
        return { status: 'running' };
    }
  }
}
