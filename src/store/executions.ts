import { assembleRecords, DEFAULT_RECORD_MAX_BYTES, recordJson } from '../model/record-json.js';
import type { CheckpointPart, Db } from './store.js';
import type { ExecutionFieldRow, ExecutionRow, ExecutionsTable, NewExecutionRow } from './schema.js';

/**
 * Statuses of an execution that has not finished: it will still run (queued, waiting) or runs now.
 * Nothing announces it finished, no retention sweep deletes it, and a waiting webhook call is not
 * answered from it.
 */
export const UNFINISHED_STATUSES = ['queued', 'running', 'waiting'] as const;

/**
 * Retention's statements are written `status NOT IN (queued, running, waiting)`, not `IN
 * (succeeded, failed, filtered)`: for the IN, SQLite (without ANALYZE statistics, as a hookflow
 * database is) walks the (status, run_after) index through every finished execution instead of the
 * id range: 5.5 ms instead of 0.3 ms per statement with 50 000 executions, and a sweep at full
 * load cut throughput by a third.
 */
const UNFINISHED = UNFINISHED_STATUSES;

/** How many later executions of a workflow are searched for an execution's retries (executionsRepo.retriesOf). */
export const RETRY_WINDOW = 10_000;

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

/** `row` with its concurrency key, limit and newest-wins value (SPEC 7d; engine/concurrency.ts). */
export function withConcurrency(
  row: NewExecutionRow,
  c: { key: string; limit: number; newest: number | null },
): NewExecutionRow {
  return { ...row, concurrency_key: c.key, concurrency_limit: c.limit, newest_value: c.newest };
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
   * The retries of execution `id` (rows whose `retry_of` is it), oldest first, at most `limit`:
   * looked for among the next RETRY_WINDOW executions of its workflow (a retry is made after the
   * execution it retries, and ids grow with time), through the (workflow_id, id) index — no index
   * on retry_of, which nothing else reads.
   */
  async retriesOf(db: Db, row: Pick<ExecutionRow, 'id' | 'workflow_id'>, limit = 20): Promise<string[]> {
    const window = db
      .selectFrom('executions')
      .select(['id', 'retry_of'])
      .where('workflow_id', '=', row.workflow_id)
      .where('id', '>', row.id)
      .orderBy('id')
      .limit(RETRY_WINDOW)
      .as('w');
    const rows = await db
      .selectFrom(window)
      .select('w.id')
      .where('w.retry_of', '=', row.id)
      .orderBy('w.id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
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

  /** The id `offset` rows below the newest (retention's count limit: what is at or below it goes). */
  async nthNewestId(db: Db, offset: number): Promise<string | undefined> {
    const row = await db
      .selectFrom('executions')
      .select('id')
      .orderBy('id', 'desc')
      .limit(1)
      .offset(offset)
      .executeTakeFirst();
    return row?.id;
  },

  /**
   * Retention's next batch: the oldest `limit` finished executions with an id below `olderThan`
   * or at or below `atOrBelow`, as an id range [first, last] and a count (one walk of the primary
   * key), so the deletes of `deleteFinishedRange` are range scans with two parameters, not lists
   * of hundreds of ids to bind, compile and look up one by one. Undefined when there are none.
   */
  async finishedRange(
    db: Db,
    cutoff: { olderThan: string | undefined; atOrBelow: string | undefined },
    limit: number,
  ): Promise<{ first: string; last: string; n: number } | undefined> {
    const { olderThan, atOrBelow } = cutoff;
    const batch = db
      .selectFrom('executions')
      .select('id')
      .where('status', 'not in', UNFINISHED)
      .where((eb) =>
        eb.or([
          ...(olderThan !== undefined ? [eb('id', '<', olderThan)] : []),
          ...(atOrBelow !== undefined ? [eb('id', '<=', atOrBelow)] : []),
        ]),
      )
      .orderBy('id')
      .limit(limit);
    const range = await db
      .selectFrom(batch.as('batch'))
      .select((eb) => [eb.fn.min('id').as('first'), eb.fn.max('id').as('last'), eb.fn.countAll().as('n')])
      .executeTakeFirst();
    const n = Number(range?.n ?? 0);
    if (!range || n === 0 || range.first === null || range.last === null) return undefined;
    const { first, last } = range as { first: string; last: string };
    return { first, last, n };
  },

  /**
   * Deletes the finished executions with ids in [first, last], with their uploaded files,
   * searchable fields and checkpoint parts; queued, running and waiting ones inside the range stay (every delete
   * repeats the status test). Give a transaction: it is six statements.
   */
  async deleteFinishedRange(db: Db, first: string, last: string): Promise<void> {
    const inRange = db
      .selectFrom('executions')
      .select('id')
      .where('id', '>=', first)
      .where('id', '<=', last)
      .where('status', 'not in', UNFINISHED);
    await db
      .deleteFrom('blob_parts')
      .where('blob_id', 'in', (eb) =>
        eb.selectFrom('blobs').select('id').where('execution_id', 'in', inRange),
      )
      .execute();
    await db.deleteFrom('blobs').where('execution_id', 'in', inRange).execute();
    // Searchable fields, found like the files through an index on execution_id.
    await db.deleteFrom('execution_fields').where('execution_id', 'in', inRange).execute();
    // Checkpoint parts left by an execution the queue failed while it had one (its finish by the
    // engine deletes them itself).
    await db.deleteFrom('execution_checkpoints').where('execution_id', 'in', inRange).execute();
    // Its waits for a call or an event (SPEC 7g).
    await db.deleteFrom('execution_waits').where('execution_id', 'in', inRange).execute();
    await db
      .deleteFrom('executions')
      .where('id', '>=', first)
      .where('id', '<=', last)
      .where('status', 'not in', UNFINISHED)
      .execute();
  },

  /** The parts of `id`'s checkpoint, oldest first (what the engine resumes from, with the head). */
  async checkpointParts(db: Db, id: string): Promise<Omit<CheckpointPart, 'seq'>[]> {
    return db
      .selectFrom('execution_checkpoints')
      .select(['state', 'records'])
      .where('execution_id', '=', id)
      .orderBy('seq')
      .execute();
  },

  /**
   * `rows` with their records so far: a row with a checkpoint (waiting, or resumed and running)
   * keeps them in the checkpoint's parts, not in `steps` (each park writes only what it added:
   * engine/checkpoint.ts); they are put together here, as a new row value. Other rows as they are.
   */
  async withRecordsSoFar<R extends Pick<ExecutionRow, 'id' | 'steps' | 'resume_state'>>(
    db: Db,
    rows: readonly R[],
  ): Promise<R[]> {
    const ids = rows.filter((r) => r.resume_state != null).map((r) => r.id);
    if (ids.length === 0) return [...rows];
    const parts = await db
      .selectFrom('execution_checkpoints')
      .select(['execution_id', 'records'])
      .where('execution_id', 'in', ids)
      .orderBy('execution_id')
      .orderBy('seq')
      .execute();
    const deltas = new Map<string, string[]>();
    for (const p of parts) {
      const list = deltas.get(p.execution_id);
      if (list) list.push(p.records);
      else deltas.set(p.execution_id, [p.records]);
    }
    return rows.map((r) => {
      const d = deltas.get(r.id);
      // No parts: a checkpoint of the first format, whose records are in `steps`.
      return d ? { ...r, steps: JSON.stringify(assembleRecords(d)) } : r;
    });
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
 * Step records as stored (model/record-json.ts `recordJson`), within `maxBytes`: values past it
 * are markers. Top-level records are stored without their `input`: a step's input is the previous
 * step's output (the trigger item for the first step), both stored already. Writing it again made
 * every execution re-serialise its whole trigger item (for a 3-step workflow and a 600-byte form
 * request, 2.1 KB of steps JSON instead of 0.6 KB; for a 10 MB JSON body, 10 MB more per execution).
 */
export function stepsJson(steps: readonly object[], maxBytes = DEFAULT_RECORD_MAX_BYTES): string {
  return recordJson(steps, maxBytes)!;
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
