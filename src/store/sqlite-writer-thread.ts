/**
 * The SQLite writer thread (see sqlite-writer.ts): its own connection to the database file, the
 * hot statements prepared once, and one transaction per batch at synchronous=FULL. Blocking on
 * the commit's fsync is this thread's whole job; the event loop of the process never waits for it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { COMPLETE_EXECUTION, INSERT_EXECUTION } from './sqlite-statements.js';
import type { ThreadReply, ThreadRequest } from './sqlite-writer.js';

const port = parentPort!;
const { file, synchronous } = workerData as { file: string; synchronous: string };
const database = new SqliteDatabase(file);
database.pragma(`synchronous = ${synchronous}`);
// The event loop's connection may hold the write lock for a moment (an API write, a claim).
database.pragma('busy_timeout = 5000');
database.pragma('foreign_keys = ON');
// Prepared on the first batch: the thread starts before the migrations have created the tables.
const statements = new Map<'insert' | 'complete', SqliteDatabase.Statement>();
function statement(kind: 'insert' | 'complete'): SqliteDatabase.Statement {
  let s = statements.get(kind);
  if (!s) {
    s = database.prepare(kind === 'insert' ? INSERT_EXECUTION : COMPLETE_EXECUTION);
    statements.set(kind, s);
  }
  return s;
}
const batch = database.transaction(
  (writes: ThreadRequest['writes']): boolean[] =>
    writes.map(([kind, params]) => statement(kind).run(params).changes > 0),
  // BEGIN IMMEDIATE: the write lock is taken (or waited for) at the start, never upgraded midway.
).immediate;

port.on('message', (msg: ThreadRequest | 'close') => {
  if (msg === 'close') {
    database.close();
    port.close();
    return;
  }
  let reply: ThreadReply;
  try {
    reply = { seq: msg.seq, results: batch(msg.writes) };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    reply = { seq: msg.seq, error: { message: String(e.message ?? err), code: e.code } };
  }
  port.postMessage(reply);
});
