/**
 * A batch of hot writes in one transaction on one connection: what the writer thread runs for each
 * batch (writer-thread.ts), and what the event loop's connection runs for a lone sender's write
 * (store.ts writeHotNow). Statements are prepared on the first batch: the thread starts before the
 * migrations have created the tables.
 */
import type SqliteDatabase from 'better-sqlite3';
import { COMPLETE_EXECUTION, INSERT_EXECUTION, INSERT_EXECUTION_FIELD } from './statements.js';
import type { ThreadWrite } from './writer.js';

const SQL = { insert: INSERT_EXECUTION, complete: COMPLETE_EXECUTION, field: INSERT_EXECUTION_FIELD };

/** Per write whether it was recorded (a completion whose lease was lost is not). */
export function hotBatch(database: SqliteDatabase.Database): (writes: ThreadWrite[]) => boolean[] {
  const statements = new Map<keyof typeof SQL, SqliteDatabase.Statement>();
  const statement = (kind: keyof typeof SQL): SqliteDatabase.Statement => {
    let s = statements.get(kind);
    if (!s) {
      s = database.prepare(SQL[kind]);
      statements.set(kind, s);
    }
    return s;
  };
  return database.transaction(
    (writes: ThreadWrite[]): boolean[] =>
      writes.map(([kind, params, fields]) => {
        const done = statement(kind).run(params).changes > 0;
        if (fields) for (const f of fields) statement('field').run(f);
        return done;
      }),
    // BEGIN IMMEDIATE: the write lock is taken (or waited for) at the start, never upgraded midway.
  ).immediate;
}
