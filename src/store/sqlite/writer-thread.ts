/**
 * The SQLite writer thread (see sqlite/writer.ts): its own connection to the database file, the
 * hot statements prepared once, and one transaction per batch at synchronous=FULL. Blocking on
 * the commit's fsync is this thread's whole job; the event loop of the process never waits for it.
 * (Committing at NORMAL and syncing the WAL on the thread's libuv pool while the next batch is
 * written was measured too: no faster, 18.3–19.0k → 17.4–17.8k req/s.)
 *
 * With a runner (a module given by the process, queue/pure-run-thread.ts), `run` writes are
 * pure workflows' executions: the runner runs each and fills its row in finished, then it is
 * inserted with the rest of its batch. Every request's commit waits for those runs, so a batch's
 * runs together get a short slice (the runner's policy: it is told when the batch's runs began); a
 * run that does not fit in what is left is abandoned and its row inserted as it came (`queued`):
 * the executor runs it later, off this thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import type { NewExecutionRow } from '../schema.js';
import {
  COMPLETE_EXECUTION,
  INSERT_EXECUTION,
  INSERT_EXECUTION_FIELD,
  insertParams,
  type SqlValue,
} from './statements.js';
import type { FieldParams, RunFinished, ThreadData, ThreadReply, ThreadRequest } from './writer.js';

type Runner = (row: NewExecutionRow, batchStart: number) => Promise<{ crash?: string; deferred?: true }>;

const port = parentPort!;
const { file, synchronous, runner: runnerSpec } = workerData as ThreadData;
const database = new SqliteDatabase(file);
database.pragma(`synchronous = ${synchronous}`);
// The event loop's connection may hold the write lock for a moment (an API write, a claim).
database.pragma('busy_timeout = 5000');
database.pragma('foreign_keys = ON');
// Appending rows touches few pages (the right edges of the table and its indexes): better-sqlite3's
// default page cache of 16 MB only held pages this connection never reads again. Peak RSS of a
// 10 s webhook load 170 → 156 MB with 256 KB, no slower; 1 MB leaves room for bigger rows.
database.pragma('cache_size = -1024');

// Prepared on the first batch: the thread starts before the migrations have created the tables.
const SQL = { insert: INSERT_EXECUTION, complete: COMPLETE_EXECUTION, field: INSERT_EXECUTION_FIELD };
const statements = new Map<keyof typeof SQL, SqliteDatabase.Statement>();
function statement(kind: keyof typeof SQL): SqliteDatabase.Statement {
  let s = statements.get(kind);
  if (!s) {
    s = database.prepare(SQL[kind]);
    statements.set(kind, s);
  }
  return s;
}
/** A write as the batch runs it: an insert may carry its searchable fields (execution-search.ts). */
type Write = ['insert', SqlValue[], FieldParams?] | ['complete', SqlValue[]];
const batch = database.transaction(
  (writes: Write[]): boolean[] =>
    writes.map(([kind, params, fields]) => {
      const done = statement(kind).run(params).changes > 0;
      if (fields) for (const f of fields) statement('field').run(f);
      return done;
    }),
  // BEGIN IMMEDIATE: the write lock is taken (or waited for) at the start, never upgraded midway.
).immediate;

/** The runner, loaded on first use; undefined (and `loadError` set) when it cannot be. */
let runner: Promise<Runner | undefined> | undefined;
let loadError: string | undefined;
const loadRunner = (): Promise<Runner | undefined> => {
  runner ??= import(runnerSpec!.module).then(
    (m: { createRunner: (db: SqliteDatabase.Database, options: unknown) => Runner }) =>
      m.createRunner(database, runnerSpec!.options),
    (err: unknown) => {
      loadError = `the writer thread cannot run pure workflows: ${String(err)}`;
      return undefined;
    },
  );
  return runner;
};

async function handle(msg: ThreadRequest): Promise<ThreadReply> {
  const finished: NonNullable<ThreadReply['finished']> = [];
  const writes: Write[] = [];
  /** When this batch's first run began (after the runner was loaded). */
  let batchStart: number | undefined;
  for (const [i, write] of msg.writes.entries()) {
    if (write[0] !== 'run') {
      writes.push(write);
      continue;
    }
    const [, payload, fields] = write;
    // Without a runner, or when the runner gives up on it, the row goes in as it came (queued):
    // the executor runs it later.
    const run = await loadRunner();
    batchStart ??= Date.now();
    const { crash, deferred } = run ? await run(payload, batchStart) : { deferred: true };
    if (!deferred) {
      finished.push({
        index: i,
        status: payload.status as RunFinished['status'],
        error: payload.error ?? null,
        ...(crash ? { crash } : {}),
      });
    }
    writes.push(fields ? ['insert', insertParams(payload), fields] : ['insert', insertParams(payload)]);
  }
  const reply: ThreadReply = { seq: msg.seq, results: batch(writes) };
  if (finished.length > 0) reply.finished = finished;
  if (loadError) {
    reply.warning = loadError;
    loadError = undefined;
  }
  return reply;
}

const failure = (seq: number, err: unknown): ThreadReply => {
  const e = err as { message?: string; code?: string };
  return { seq, error: { message: String(e.message ?? err), code: e.code } };
};

// One batch at a time, in the order sent (running workflows awaits).
let chain: Promise<void> = Promise.resolve();
port.on('message', (msg: ThreadRequest | 'close') => {
  chain = chain.then(async () => {
    if (msg === 'close') {
      database.close();
      port.close();
      return;
    }
    port.postMessage(await handle(msg).catch((err: unknown) => failure(msg.seq, err)));
  });
});
