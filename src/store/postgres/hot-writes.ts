/**
 * Hot writes on PostgreSQL (store.ts `HotWrite`): a whole group-commit batch in ONE statement, as a
 * named prepared statement, in its own implicit transaction, so a batch costs one round trip and
 * one commit, whatever its size. (Through Kysely a batch of n inserts was BEGIN, n INSERTs and
 * COMMIT: n + 2 round trips, each statement built and compiled again, and planned by the server
 * each time: 0.15× of a bare multi-row-INSERT receiver, measured.)
 *
 * The rows travel as one array per column and are spread back into rows by `unnest`, like
 * graphile-worker's `add_jobs` and `complete_jobs`: the statement's text does not depend on the
 * batch's size, so it is parsed and planned once per connection and only bound and executed after
 * that (a multi-row `VALUES` list would be a new statement for every batch size).
 *
 * A batch holding both kinds runs the inserts in a data-modifying CTE of the completions' UPDATE:
 * still one statement. Its UPDATE does not see rows inserted by the same statement, which is never
 * needed: an execution is completed only after the commit that stored it has been acknowledged.
 *
 * Completions that park (appending a part of their checkpoint, engine/checkpoint.ts) or finish
 * after a resume (deleting those parts) take a variant whose UPDATE is a CTE too: the parts are
 * inserted or deleted only for the rows it updated (those whose lease the worker still held).
 */
import type pg from 'pg';
import type { ExecutionCompletion, HotWrite } from '../store.js';
import { EXECUTION_INSERT_COLUMNS, executionInsertValues } from '../execution-insert.js';
import type { NewExecutionRow } from '../schema.js';

const INSERT_COLUMNS = EXECUTION_INSERT_COLUMNS;

const COMPLETE_COLUMNS = [
  'id',
  'locked_by',
  'status',
  'steps',
  'error',
  'finished_at',
  'run_after',
  'resume_state',
] as const;

/** The checkpoint columns of the completions' variant that parks or finishes after a resume. */
const CHECKPOINT_COLUMNS = ['part_seq', 'part_state', 'part_records', 'drop_parts'] as const;

function unnest(types: readonly string[], from: number): string {
  return `unnest(${types.map((t, i) => `$${from + i}::${t}[]`).join(', ')})`;
}

const INSERT = `insert into executions (${INSERT_COLUMNS.map(([c]) => c).join(', ')})
  select * from ${unnest(
    INSERT_COLUMNS.map(([, t]) => t),
    1,
  )}`;

function complete(from: number): string {
  return `update executions as e
  set status = c.status, steps = c.steps, error = c.error, finished_at = c.finished_at,
    run_after = coalesce(c.run_after, e.run_after), resume_state = c.resume_state,
    locked_by = null, locked_until = null
  from ${unnest(
    COMPLETE_COLUMNS.map(() => 'text'),
    from,
  )} as c(${COMPLETE_COLUMNS.join(', ')})
  where e.id = c.id and e.locked_by = c.locked_by
  returning e.id`;
}

/**
 * Completions with checkpoint parts to append or delete: the UPDATE as the CTE `done`, then the
 * parts of the rows it updated. Named CTEs, then the final statement.
 */
function completeWithCheckpoints(from: number): { ctes: string[]; last: string } {
  const columns = [...COMPLETE_COLUMNS, ...CHECKPOINT_COLUMNS];
  return {
    ctes: [
      `c as (select * from ${unnest(
        columns.map(() => 'text'),
        from,
      )} as c(${columns.join(', ')}))`,
      `done as (update executions as e
  set status = c.status, steps = c.steps, error = c.error, finished_at = c.finished_at,
    run_after = coalesce(c.run_after, e.run_after), resume_state = c.resume_state,
    locked_by = null, locked_until = null
  from c where e.id = c.id and e.locked_by = c.locked_by
  returning e.id)`,
      `parts as (insert into execution_checkpoints (execution_id, seq, state, records)
  select c.id, c.part_seq::integer, c.part_state, c.part_records from c join done on done.id = c.id
  where c.part_seq is not null)`,
      `dropped as (delete from execution_checkpoints as p using c join done on done.id = c.id
  where p.execution_id = c.id and c.drop_parts is not null)`,
    ],
    last: 'select id from done',
  };
}

const FIELD_COLUMNS = ['workflow_id', 'path', 'value', 'execution_id'] as const;

/** Searchable fields of inserted executions (execution-search.ts), in the same statement. */
function insertFields(from: number): string {
  return `insert into execution_fields (${FIELD_COLUMNS.join(', ')})
  select * from ${unnest(
    FIELD_COLUMNS.map(() => 'text'),
    from,
  )}`;
}

/**
 * The statement for a batch holding executions to insert, their searchable fields, completions, or
 * several of these: the inserts as data-modifying CTEs of the last part. Named by what it holds:
 * node-postgres prepares each once per connection, then only binds and executes it.
 */
const statements = new Map<string, { name: string; text: string }>();
function statement(
  inserts: boolean,
  fields: boolean,
  completions: boolean,
  checkpoints: boolean,
): { name: string; text: string } {
  const key = `${inserts ? 'i' : ''}${fields ? 'f' : ''}${completions ? (checkpoints ? 'k' : 'c') : ''}`;
  let found = statements.get(key);
  if (!found) {
    const parts: string[] = [];
    let next = 1;
    if (inserts) {
      parts.push(INSERT);
      next += INSERT_COLUMNS.length;
    }
    if (fields) {
      parts.push(insertFields(next));
      next += FIELD_COLUMNS.length;
    }
    let ctes: string[];
    let last: string;
    if (completions && checkpoints) {
      const k = completeWithCheckpoints(next);
      ctes = [...parts.map((p, i) => `w${i} as (${p})`), ...k.ctes];
      last = k.last;
    } else {
      if (completions) parts.push(complete(next));
      last = parts.pop()!;
      ctes = parts.map((p, i) => `w${i} as (${p})`);
    }
    const text = ctes.length > 0 ? `with ${ctes.join(', ')} ${last}` : last;
    found = { name: `hookflow_hot_${key}`, text };
    statements.set(key, found);
  }
  return found;
}

/** A searchable field row (execution_fields), as an insert carries it. */
interface FieldRow {
  workflow_id: string;
  path: string;
  value: string;
  execution_id: string;
}

type Value = string | number | null;

function insertColumns(rows: readonly NewExecutionRow[]): Value[][] {
  const cols: Value[][] = INSERT_COLUMNS.map(() => []);
  for (const r of rows) {
    const values = executionInsertValues(r);
    for (let i = 0; i < values.length; i++) cols[i]!.push(values[i]!);
  }
  return cols;
}

function completeColumns(completions: readonly ExecutionCompletion[], checkpoints: boolean): Value[][] {
  const cols: Value[][] = (checkpoints ? [...COMPLETE_COLUMNS, ...CHECKPOINT_COLUMNS] : COMPLETE_COLUMNS).map(
    () => [],
  );
  for (const c of completions) {
    const values: Value[] = [
      c.id,
      c.lockedBy,
      c.status,
      c.steps,
      c.error,
      c.finishedAt,
      c.runAfter,
      c.resumeState,
    ];
    if (checkpoints) {
      const part = c.checkpointPart;
      values.push(
        part ? String(part.seq) : null,
        part?.state ?? null,
        part?.records ?? null,
        c.dropCheckpoint ? '1' : null,
      );
    }
    for (let i = 0; i < values.length; i++) cols[i]!.push(values[i]!);
  }
  return cols;
}

/**
 * Commits `writes` in one statement on a connection of `pool`; per write, like runHotWrites
 * (hot-writes.ts): an insert true, a completion whether it was recorded (false: the lease was lost).
 */
export async function writeHotBatch(pool: pg.Pool, writes: readonly HotWrite[]): Promise<boolean[]> {
  const rows: NewExecutionRow[] = [];
  const fields: FieldRow[] = [];
  const completions: ExecutionCompletion[] = [];
  for (const w of writes) {
    if (w.kind === 'insert') {
      rows.push(w.row);
      // Read without naming the type: only an insert of an execution with searchable fields has them.
      const more = (w as { fields?: readonly FieldRow[] }).fields;
      if (more) fields.push(...more);
    } else completions.push(w.completion);
  }
  const values: Value[][] = [];
  if (rows.length > 0) values.push(...insertColumns(rows));
  if (fields.length > 0) values.push(...FIELD_COLUMNS.map((c) => fields.map((f) => f[c])));
  const checkpoints = completions.some((c) => c.checkpointPart || c.dropCheckpoint);
  if (completions.length > 0) values.push(...completeColumns(completions, checkpoints));
  const client = await pool.connect();
  let result: pg.QueryResult<{ id: string }>;
  try {
    result = await client.query<{ id: string }>({
      ...statement(rows.length > 0, fields.length > 0, completions.length > 0, checkpoints),
      values,
    });
  } finally {
    // A client whose connection broke is dropped by the pool on release (see store.ts).
    client.release();
  }
  const recorded = new Set(completions.length > 0 ? result.rows.map((r) => r.id) : []);
  return writes.map((w) => w.kind === 'insert' || recorded.has(w.completion.id));
}
