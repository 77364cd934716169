import type { Db } from './store.js';
import type { ExecutionFieldRow, ExecutionRow, ExecutionsTable, NewExecutionRow } from './schema.js';

/**
 * Statuses of an execution that has not finished: it will still run (queued, waiting) or runs now.
 * Nothing announces it finished, no retention sweep deletes it, and a waiting webhook call is not
 * answered from it.
 */
export const UNFINISHED_STATUSES = ['queued', 'running', 'waiting'] as const;

export function isFinished(status: ExecutionsTable['status']): boolean {
  return status !== 'queued' && status !== 'running' && status !== 'waiting';
}

export interface ExecutionFilter {
  workflowId?: string | undefined;
  status?: ExecutionsTable['status'] | undefined;
  mode?: ExecutionsTable['mode'] | undefined;
  before?: string | undefined;
  limit: number;
}

/** A new execution, queued and due at `created_at`: what an accepted request, a retry and a replay insert. */
export function queuedExecution(r: {
  id: string;
  workflow_id: string;
  workflow_version: number;
  mode: NewExecutionRow['mode'];
  trigger: string;
  created_at: string;
  retry_of?: string | null;
  warnings?: string | null;
}): NewExecutionRow {
  return {
    id: r.id,
    workflow_id: r.workflow_id,
    workflow_version: r.workflow_version,
    mode: r.mode,
    status: 'queued',
    trigger: r.trigger,
    steps: '[]',
    error: null,
    attempt: 1,
    retry_of: r.retry_of ?? null,
    run_after: r.created_at,
    locked_until: null,
    locked_by: null,
    created_at: r.created_at,
    started_at: null,
    finished_at: null,
    warnings: r.warnings ?? null,
  };
}

export const executionsRepo = {
  /**
   * The execution and its searchable fields (execution-search.ts `searchFieldRows`): give a
   * transaction when there are fields, so both are committed together.
   */
  async insert(db: Db, row: NewExecutionRow, fields: readonly ExecutionFieldRow[] = []): Promise<void> {
    await db.insertInto('executions').values(row).execute();
    if (fields.length > 0) await db.insertInto('execution_fields').values(fields).execute();
  },

  async get(db: Db, id: string): Promise<ExecutionRow | undefined> {
    return db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** Newest first. */
  async list(db: Db, f: ExecutionFilter): Promise<ExecutionRow[]> {
    let q = db.selectFrom('executions').selectAll().orderBy('id', 'desc').limit(f.limit);
    if (f.workflowId) q = q.where('workflow_id', '=', f.workflowId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.mode) q = q.where('mode', '=', f.mode);
    if (f.before) q = q.where('id', '<', f.before);
    return q.execute();
  },

  /**
   * Records `errorExecutionId` as the error workflow's execution of `id`, only while it has none;
   * whether it was recorded (false: recorded before, or the execution is gone).
   */
  async linkErrorExecution(db: Db, id: string, errorExecutionId: string): Promise<boolean> {
    const res = await db
      .updateTable('executions')
      .set({ error_execution_id: errorExecutionId })
      .where('id', '=', id)
      .where('error_execution_id', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Which of `ids` (at most 1 000: one `in` list) have finished. */
  async finishedAmong(db: Db, ids: readonly string[]): Promise<string[]> {
    const rows = await db
      .selectFrom('executions')
      .select('id')
      .where('id', 'in', ids)
      .where('status', 'not in', UNFINISHED_STATUSES)
      .execute();
    return rows.map((r) => r.id);
  },

  async count(db: Db, status: ExecutionsTable['status']): Promise<number> {
    const row = await db
      .selectFrom('executions')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('status', '=', status)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};

/**
 * Step records are stored without their `input`: a step's input is the previous step's output (the
 * trigger item for the first step), both stored already. Writing it again made every execution
 * re-serialise its whole trigger item (for a 3-step workflow and a 600-byte form request, 2.1 KB
 * of steps JSON instead of 0.6 KB; for a 10 MB JSON body, 10 MB more per execution).
 */
export function stepsJson(steps: readonly object[]): string {
  // A copy with `input` undefined, which JSON leaves out (a rest pattern `{ input, ...rest }` copies
  // through a runtime call, several times slower).
  return JSON.stringify(steps.map((step) => ({ ...step, input: undefined })));
}

/** Puts back what `stepsJson` left out (records written with their input keep it). */
export function withStepInputs(
  steps: Record<string, unknown>[],
  trigger: unknown,
): Record<string, unknown>[] {
  let previous = trigger;
  return steps.map((step) => {
    const withInput = 'input' in step ? step : { ...step, input: previous };
    previous = step.output;
    return withInput;
  });
}
