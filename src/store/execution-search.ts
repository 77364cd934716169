/**
 * Executions search by a field of the trigger item (issue 19: `GET /executions?where=body.order_id=o-1`).
 *
 * Any path may be searched, so no index can hold every one of them without taxing every accepted
 * request (a GIN index over the item on PostgreSQL, a row per field in a side table), which is
 * what the webhook hot path cannot afford. Instead each request searches a bounded window: the
 * next WINDOW executions (newest first, after the cursor, with the other filters applied through
 * their indexes: the primary key, or (workflow_id, id)), and tests the field only on those. A
 * request therefore costs the same at a thousand rows or a million; a page may hold fewer items
 * than `limit` (even none) with a `nextCursor` that continues the search further back, and the
 * search is over when `nextCursor` is null.
 *
 * The field: SQLite `json_extract(trigger, '$."a"."b"')` cast to text; PostgreSQL
 * `trigger::jsonb #>> '{a,b}'`. Either way the text of the value: `o-1`, `42`, and on PostgreSQL
 * `true`/`false` (SQLite: 1/0).
 */
import { sql } from 'kysely';
import type { ExecutionFilter } from './executions.js';
import type { ExecutionRow } from './schema.js';
import type { Db, DialectCapabilities } from './store.js';

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

/** `body.order_id=o-1` → the condition; undefined when the text is not one (the route says why). */
export function parseWhere(text: string): FieldCondition | undefined {
  const eq = text.indexOf('=');
  if (eq <= 0) return undefined;
  const path = text.slice(0, eq).split('.');
  if (path.length > 10 || !path.every((p) => /^[A-Za-z0-9_$@-]{1,128}$/.test(p))) return undefined;
  return { path, value: text.slice(eq + 1) };
}
