/**
 * Executions search by a field of the trigger item (`GET /executions?where=body.order_id=o-1`),
 * two ways.
 *
 * Indexed: a workflow declares the fields it wants searched (`settings.searchFields`, at most 5).
 * The store's insert of an execution writes their values into `execution_fields` in the same
 * transaction as the execution row (hot-writes.ts, sqlite/, executionsRepo.insert: every way a row
 * is created goes through one of them), so a field is searchable exactly when its execution is
 * committed. Its primary key (workflow_id, path, value, execution_id) answers a search of one
 * workflow with an index range walked newest first: full pages, exact results, any depth. Only
 * executions written while their version declared the field are in it: declaring a field later
 * does not index older executions. A workflow that declares none writes nothing more.
 *
 * Windowed (any other path): no index can hold every path without taxing every accepted request
 * (a GIN index over the item on PostgreSQL, a row per field in a side table), which is what the
 * webhook hot path cannot afford. Instead each request searches a bounded window: the next WINDOW
 * executions (newest first, after the cursor, with the other filters applied through their
 * indexes: the primary key, or (workflow_id, id)), and tests the field only on those. A request
 * therefore costs the same at a thousand rows or a million; a page may hold fewer items than
 * `limit` (even none) with a `nextCursor` that continues the search further back, and the search is
 * over when `nextCursor` is null.
 *
 * The value compared is its text. Indexed: a string as is, a number as JSON writes it, `true` /
 * `false`; objects, arrays, null and strings over MAX_VALUE_LENGTH are not indexed (a search for a
 * longer value is windowed). Windowed: SQLite `json_extract(trigger, '$."a"."b"')` cast to text;
 * PostgreSQL `trigger::json #>> '{a,b}'`: the same, except that SQLite reads booleans as 1/0.
 */
import { sql } from 'kysely';
import type { ExecutionFilter } from './executions.js';
import type { ExecutionFieldRow, ExecutionRow } from './schema.js';
import type { Db, DialectCapabilities } from './store.js';
import { FIELD_PATH_PATTERN } from '../shared/search-fields.js';

/** Executions examined per request. Measured: see the commit that added this file. */
export const SEARCH_WINDOW = 10_000;

export interface FieldCondition {
  /** Path segments from the item's root, e.g. ["body", "order_id"]. */
  path: string[];
  value: string;
}

export interface SearchPage {
  rows: ExecutionRow[];
  /** Where the next request continues (the oldest id examined), or undefined when all were. */
  continueBefore: string | undefined;
}

/** Windowed search (see the header). */
export async function searchExecutions(
  db: Db,
  caps: DialectCapabilities,
  f: ExecutionFilter,
  where: FieldCondition,
): Promise<SearchPage> {
  const window = () => {
    let q = db.selectFrom('executions').select('id').orderBy('id', 'desc');
    if (f.workflowId) q = q.where('workflow_id', '=', f.workflowId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.mode) q = q.where('mode', '=', f.mode);
    if (f.before) q = q.where('id', '<', f.before);
    return q;
  };
  // `json`, not `jsonb`: one extraction from text parses less than building the binary form.
  const field =
    caps.name === 'postgres'
      ? sql<string>`(trigger::json #>> ${`{${where.path.map((p) => `"${p}"`).join(',')}}`})`
      : sql<string>`cast(json_extract(trigger, ${`$${where.path.map((p) => `."${p}"`).join('')}`}) as text)`;
  // The window's ids come from their index (primary key, or workflow_id + id); the field is read
  // only for those rows, each found by its id. PostgreSQL planned `id IN (subquery)` as a
  // sequential scan reading the field of every row (4–5 s at a million); `= ANY(ARRAY(…))` is
  // computed first, then looked up by primary key.
  const ids = window().limit(SEARCH_WINDOW);
  const rows = await db
    .selectFrom('executions')
    .selectAll()
    .where(caps.name === 'postgres' ? sql<boolean>`id = any(array(${ids}))` : sql<boolean>`id in (${ids})`)
    .where(field, '=', where.value)
    .orderBy('id', 'desc')
    .limit(f.limit)
    .execute();
  // A full page ends at its last item; otherwise the whole window was searched.
  if (rows.length === f.limit) return { rows, continueBefore: rows[rows.length - 1]!.id };
  const edge = await window()
    .offset(SEARCH_WINDOW - 1)
    .limit(1)
    .executeTakeFirst();
  return { rows, continueBefore: edge?.id };
}

const FIELD_PATH = new RegExp(FIELD_PATH_PATTERN);

/** `body.order_id=o-1` → the condition; undefined when the text is not one (the route says why). */
export function parseWhere(text: string): FieldCondition | undefined {
  const eq = text.indexOf('=');
  if (eq <= 0) return undefined;
  const dotted = text.slice(0, eq);
  if (!FIELD_PATH.test(dotted)) return undefined;
  return { path: dotted.split('.'), value: text.slice(eq + 1) };
}

/** Longer string values are not indexed (a b-tree key is bounded; nobody searches by an essay). */
export const MAX_VALUE_LENGTH = 200;

/** The indexed text of a value; undefined for what is not indexed (see the header). */
export function fieldText(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value.length <= MAX_VALUE_LENGTH ? value : undefined;
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return undefined;
  }
}

/** The value at a dotted path of the item (object keys, or array indexes), or undefined. */
function valueAt(item: unknown, path: string): unknown {
  let at = item;
  for (const name of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, name)) return undefined;
    at = (at as Record<string, unknown>)[name];
  }
  return at;
}

/**
 * The `execution_fields` rows of a new execution: one per declared path whose value is indexed.
 * None (and no work) when the workflow declares no field.
 */
export function searchFieldRows(
  execution: { id: string; workflow_id: string },
  paths: readonly string[] | undefined,
  item: unknown,
): ExecutionFieldRow[] {
  if (paths === undefined || paths.length === 0) return [];
  const rows: ExecutionFieldRow[] = [];
  for (const path of paths) {
    const value = fieldText(valueAt(item, path));
    if (value !== undefined)
      rows.push({ workflow_id: execution.workflow_id, path, value, execution_id: execution.id });
  }
  return rows;
}

/**
 * Indexed search: the executions of these workflows whose declared `path` holds `value`, newest
 * first, after `f.before`, with the other filters; at most `f.limit` rows (ask for one more to
 * know whether there is a next page). One walk of the primary key per workflow, merged.
 */
export async function searchIndexed(
  db: Db,
  f: ExecutionFilter,
  workflowIds: readonly string[],
  path: string,
  value: string,
): Promise<ExecutionRow[]> {
  const perWorkflow = await Promise.all(
    workflowIds.map((workflowId) => {
      // A cross join, not an inner one: SQLite then takes the tables in the order written (its
      // documented way to fix the join order), so it walks the field index and looks each
      // execution up by id rather than starting from the executions' status index when a status
      // filter is given. PostgreSQL plans a cross join with a join condition like an inner join.
      let q = db
        .selectFrom('execution_fields as f')
        .crossJoin('executions as e')
        .selectAll('e')
        .whereRef('e.id', '=', 'f.execution_id')
        .where('f.workflow_id', '=', workflowId)
        .where('f.path', '=', path)
        .where('f.value', '=', value);
      if (f.before) q = q.where('f.execution_id', '<', f.before);
      if (f.status) q = q.where('e.status', '=', f.status);
      if (f.mode) q = q.where('e.mode', '=', f.mode);
      return q.orderBy('f.execution_id', 'desc').limit(f.limit).execute();
    }),
  );
  const rows = perWorkflow.length === 1 ? perWorkflow[0]! : perWorkflow.flat();
  if (perWorkflow.length > 1) rows.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return rows.slice(0, f.limit);
}
