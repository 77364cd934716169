/**
 * A batch of hot writes in one transaction on one connection: what the writer thread runs for each
 * batch (writer-thread.ts), and what the event loop's connection runs for a lone sender's write
 * (store.ts writeHotNow). Statements are prepared on the first batch: the thread starts before the
 * migrations have created the tables.
 */
import type SqliteDatabase from 'better-sqlite3';
import {
  COMPLETE_EXECUTION,
  DELETE_CHECKPOINT_PARTS,
  INSERT_CHECKPOINT_PART,
  INSERT_EXECUTION,
  INSERT_EXECUTION_FIELD,
} from './statements.js';
import type { ThreadWrite } from './writer.js';

const SQL = {
  insert: INSERT_EXECUTION,
  complete: COMPLETE_EXECUTION,
  field: INSERT_EXECUTION_FIELD,
  part: INSERT_CHECKPOINT_PART,
  drop: DELETE_CHECKPOINT_PARTS,
};

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
      writes.map((w) => {
        const done = statement(w[0]).run(w[1]).changes > 0;
        if (w[0] === 'insert') {
          if (w[2]) for (const f of w[2]) statement('field').run(f);
        } else if (done && w[2]) {
          // A park appends its checkpoint's part; a finish after a resume deletes the parts.
          if (w[2] === 'drop') statement('drop').run(w[1][6]);
          else statement('part').run(w[2]);
        }
        return done;
      }),
    // BEGIN IMMEDIATE: the write lock is taken (or waited for) at the start, never upgraded midway.
  ).immediate;
}
