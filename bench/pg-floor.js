/**
 * The bench's `pg floor` reference case (`npm run bench -- --postgres`): the least a receiver that
 * commits every request to PostgreSQL before answering can do with Node.js on this machine. A
 * `node:http` server reads the form body, turns the request into a JSON item, and queues the row;
 * rows are written in batches, one multi-row INSERT per batch over a pool of two connections (two
 * batches in flight), at the server's default `synchronous_commit = on`, and each request is
 * answered 200 with its row's id once its batch is committed. No routing, no validation, no limits,
 * no metrics, no workflow: HTTP, one durable insert per request, and the round trips.
 *
 * Measured beside `hookflow webhook` (bench/run.js --postgres), it separates what hookflow's own
 * code costs in distributed mode from what PostgreSQL's commits cost here (issue 20).
 *
 *   node bench/pg-floor.js PORT DATABASE_URL
 */
import pg from 'pg';
import { serveFloor } from './floor-server.js';

const CONNECTIONS = 2;
// Rows per INSERT at most: 6 parameters a row, PostgreSQL takes 65 535 parameters a statement.
const MAX_BATCH = 1000;

const [port, databaseUrl] = process.argv.slice(2);
// Named, so that the bench can tell the floor's backends from hookflow's (CPU per request).
const pool = new pg.Pool({
  connectionString: databaseUrl,
  max: CONNECTIONS,
  application_name: 'hookflow-pg-floor',
});
pool.on('error', (err) => {
  console.error(err);
  process.exit(1);
});
await pool.query(`create table if not exists floor_executions (id text primary key, workflow_id text not null,
  status text not null, trigger text not null, run_after text not null, created_at text not null)`);
await pool.query(
  'create index if not exists floor_executions_status_run_after on floor_executions (status, run_after)',
);
await pool.query(
  'create index if not exists floor_executions_workflow_id on floor_executions (workflow_id, id)',
);

const queued = [];
let inFlight = 0;
let scheduled = false;

async function write(rows) {
  const params = [];
  const values = rows.map((r, i) => {
    params.push(r.id, 'floor', 'queued', r.trigger, r.now, r.now);
    const b = i * 6;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6})`;
  });
  await pool.query(
    `insert into floor_executions (id, workflow_id, status, trigger, run_after, created_at) values ${values.join(', ')}`,
    params,
  );
}

function flush() {
  scheduled = false;
  while (inFlight < CONNECTIONS && queued.length > 0) {
    const rows = queued.splice(0, MAX_BATCH);
    inFlight++;
    write(rows)
      .then(
        () => {
          for (const r of rows) r.done();
        },
        (err) => {
          console.error(err);
          process.exit(1);
        },
      )
      .finally(() => {
        inFlight--;
        flush();
      });
  }
}

const commit = (row) =>
  new Promise((resolve) => {
    row.done = resolve;
    queued.push(row);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });

serveFloor(port, commit, () => pool.end());
