/**
 * The bench's `durable` reference case: the least a receiver that commits every request before
 * answering can do with Node.js and SQLite. A `node:http` server reads the form body, turns the
 * request into a JSON item, hands the row to a worker thread that inserts each batch of rows in one
 * transaction at synchronous=FULL (group commit, two batches in flight, as hookflow does), and
 * answers 200 with the row's id once its batch is committed. No routing, no validation, no limits,
 * no metrics, no workflow: what is left is HTTP, one durable insert per request and the thread hop.
 *
 * Measured beside the bare server and hookflow (bench/run.js), it separates what hookflow's own
 * code costs from what the durability promise costs on the machine at hand.
 *
 * `--contract[=PARTS]` (the bench's `contract` case): the same commit path for the requests of
 * floor-server.js's serveContractFloor, which carry what SPEC's contract asks of each accepted
 * request, into a table with hookflow's execution columns and indexes. Two routes: /webhook/bench
 * (no steps) and /webhook/bench-flow (the bench workflow as plain JavaScript: floor-server.js benchFlow).
 * PARTS, comma-separated, keeps only some of SPEC's obligations (floor-server.js OBLIGATIONS; an
 * empty list keeps none): bench/obligations.js weighs each.
 *
 *   node bench/durable-floor.js PORT DATA_DIR [--contract[=answer,item,row]]
 */
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { benchFlow, CONTRACT_COLUMNS, OBLIGATIONS, serveContractFloor, serveFloor } from './floor-server.js';

const PIPELINE = 2;

if (isMainThread) {
  const [port, dataDir, mode] = process.argv.slice(2);
  const contract = mode?.startsWith('--contract') ?? false;
  const parts = mode?.startsWith('--contract=') ? mode.slice('--contract='.length).split(',') : OBLIGATIONS;
  const name = contract
    ? `contract-floor${parts === OBLIGATIONS ? '' : `-${parts.join('-')}`}`
    : 'durable-floor';
  const writer = new Worker(new URL(import.meta.url), {
    workerData: { file: path.join(dataDir, `${name}.sqlite`), row: contract && parts.includes('row') },
  });
  const waiting = new Map();
  // The rows of the next batch, and the seq of each (what the writer answers).
  let queued = [];
  let seqs = [];
  let inFlight = 0;
  let scheduled = false;
  let seq = 0;
  const flush = () => {
    scheduled = false;
    while (inFlight < PIPELINE && queued.length > 0) {
      inFlight++;
      writer.postMessage({ rows: queued, seqs });
      queued = [];
      seqs = [];
    }
  };
  writer.on('message', (done) => {
    inFlight--;
    for (const n of done) {
      waiting.get(n)();
      waiting.delete(n);
    }
    flush();
  });
  writer.on('error', (err) => {
    console.error(err);
    process.exit(1);
  });
  const commit = (row) =>
    new Promise((resolve) => {
      waiting.set(++seq, resolve);
      seqs.push(seq);
      queued.push(row);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  if (contract)
    serveContractFloor(
      port,
      commit,
      () => writer.terminate(),
      new Map([
        ['bench', { workflowId: 'bench-workflow' }],
        ['bench-flow', { workflowId: 'bench-flow-workflow', run: benchFlow }],
      ]),
      parts,
    );
  else serveFloor(port, commit, () => writer.terminate());
} else {
  const db = new Database(workerData.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    workerData.row
      ? `create table if not exists executions (${CONTRACT_COLUMNS})`
      : `create table if not exists executions (id text primary key, workflow_id text not null,
    status text not null, trigger text not null, run_after text not null, created_at text not null)`,
  );
  db.exec('create index if not exists executions_status_run_after on executions (status, run_after)');
  db.exec('create index if not exists executions_workflow_id on executions (workflow_id, id)');
  const insert = workerData.row
    ? db.prepare(`insert into executions values (${Array(19).fill('?').join(', ')})`)
    : db.prepare(
        `insert into executions (id, workflow_id, status, trigger, run_after, created_at)
     values (?, 'floor', 'queued', ?, ?, ?)`,
      );
  const batch = db.transaction((rows) => {
    if (workerData.row) for (const r of rows) insert.run(r);
    else for (const r of rows) insert.run(r.id, r.trigger, r.now, r.now);
  }).immediate;
  parentPort.on('message', ({ rows, seqs }) => {
    batch(rows);
    parentPort.postMessage(seqs);
  });
}
