/**
 * The SQLite writer thread (see sqlite/writer.ts): its own connection to the database file, the
 * hot statements prepared once, and one transaction per batch at synchronous=FULL. Blocking on
 * the commit's fsync is this thread's whole job; the event loop of the process never waits for it.
 * (Committing at NORMAL and syncing the WAL on the thread's libuv pool while the next batch is
 * written was measured too: no faster, 18.3–19.0k → 17.4–17.8k req/s.)
 *
 * It runs no workflows. (It did: pure workflows' executions were run here before their insert.
 * Measured against running them on the event loop before the commit, alternately, 4 rounds each:
 * the three-step workflow at 0.600–0.707 of the durable floor with it, 0.560–0.789 without, no
 * gain beyond noise, and the engine loaded a second time cost ~20 MB of peak RSS. A fast path is
 * kept only for a gain of more than 5 %.)
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { hotBatch } from './hot-batch.js';
import type { ThreadData, ThreadReply, ThreadRequest } from './writer.js';

const port = parentPort!;
const { file, synchronous } = workerData as ThreadData;
const database = new SqliteDatabase(file);
database.pragma(`synchronous = ${synchronous}`);
// The event loop's connection may hold the write lock for a moment (an API write, a claim).
database.pragma('busy_timeout = 5000');
database.pragma('foreign_keys = ON');
// Appending rows touches few pages (the right edges of the table and its indexes): better-sqlite3's
// default page cache of 16 MB only held pages this connection never reads again. Peak RSS of a
// 10 s webhook load 170 → 156 MB with 256 KB, no slower; 1 MB leaves room for bigger rows.
database.pragma('cache_size = -1024');

const batch = hotBatch(database);

const failure = (seq: number, err: unknown): ThreadReply => {
  const e = err as { message?: string; code?: string };
  return { seq, error: { message: String(e.message ?? err), code: e.code } };
};

// One batch at a time, in the order sent.
port.on('message', (msg: ThreadRequest | 'close') => {
  if (msg === 'close') {
    database.close();
    port.close();
    return;
  }
  let reply: ThreadReply;
  try {
    const results = batch(msg.writes);
    reply = { seq: msg.seq, results };
  } catch (err) {
    reply = failure(msg.seq, err);
  }
  port.postMessage(reply);
});
