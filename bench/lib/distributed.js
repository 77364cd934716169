/** --postgres: distributed mode. */
import { webhookProcesses, workerProcesses } from './cli.js';
import { cleanups, freePort, hookflowArgs, startChild } from './processes.js';
import { log } from './util.js';

/**
 * Creates a fresh database, points `env` at it and starts `--webhooks` × `hookflow webhook` (the
 * first on HOOKFLOW_PORT) and `--workers` × `hookflow worker`. The first webhook child's
 * assertAlive checks every other process too, so a dead worker fails the drain instead of hanging it.
 */
export async function startDistributed(env) {
  const { default: pg } = await import('pg');
  const adminUrl = process.env.HOOKFLOW_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `hookflow_bench_${Date.now().toString(36)}_${process.pid}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  cleanups.push(() => admin(`drop database if exists ${name} with (force)`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  env.HOOKFLOW_DATABASE_URL = url.toString();
  env.HOOKFLOW_ENCRYPTION_KEY ??= 'hookflow-bench-encryption-key-0123456789';
  log(`PostgreSQL database ${name}: ${webhookProcesses} webhook and ${workerProcesses} worker process(es)`);

  // One connection for the bench's own queries (counts, CPU accounting), opened on first use.
  let client;
  const query = async (text, params) => {
    if (!client) {
      client = new pg.Client({
        connectionString: env.HOOKFLOW_DATABASE_URL,
        application_name: 'hookflow-bench',
      });
      await client.connect();
      cleanups.push(() => client.end());
    }
    return (await client.query(text, params)).rows;
  };

  // Workers bind no port; each gets its own so a stray listen could never collide.
  const workers = [];
  for (let i = 0; i < workerProcesses; i++)
    workers.push(
      startChild(`worker ${i + 1}`, process.execPath, hookflowArgs('worker'), { ...env, HOOKFLOW_PORT: '0' }),
    );
  const webhooks = [];
  for (let i = 0; i < webhookProcesses; i++) {
    const port = i === 0 ? env.HOOKFLOW_PORT : String(await freePort());
    webhooks.push({
      url: `http://127.0.0.1:${port}`,
      child: startChild(`webhook ${i + 1}`, process.execPath, hookflowArgs('webhook'), {
        ...env,
        HOOKFLOW_PORT: port,
      }),
    });
  }
  const webhook = webhooks[0].child;
  const webhookAlive = webhook.assertAlive.bind(webhook);
  webhook.assertAlive = () => {
    webhookAlive();
    for (const w of webhooks.slice(1)) w.child.assertAlive();
    for (const w of workers) w.assertAlive();
  };
  return {
    query,
    webhook,
    webhooks,
    worker: workers[0],
    workers,
    async countBacklog() {
      const rows = await query(
        "select count(*)::int as n from executions where status in ('queued', 'running')",
      );
      return rows[0].n;
    },
    async countExecutions(workflowId) {
      const rows = await query('select count(*)::int as n from executions where workflow_id = $1', [
        workflowId,
      ]);
      return rows[0].n;
    },
    /**
     * The PostgreSQL processes that work for a case: the bench database's client backends of the
     * floor (`floor`) or of hookflow (the others, but the bench's own), and the server's own
     * processes (WAL writer, checkpointer, autovacuum…; shared with whatever else runs here).
     */
    async postgresPids(floor) {
      const rows = await query(
        `select pid, backend_type, datname, application_name from pg_stat_activity
          where pid <> pg_backend_pid() and (datname = $1 or datname is null)`,
        [name],
      );
      return rows
        .filter((r) =>
          r.backend_type !== 'client backend'
            ? true
            : r.datname === name &&
              r.application_name !== 'hookflow-bench' &&
              (r.application_name === PG_FLOOR_APPLICATION) === floor,
        )
        .map((r) => r.pid);
    },
  };
}

/** The floor's connections are told apart from hookflow's by this application_name (bench/pg-floor.js). */
export const PG_FLOOR_APPLICATION = 'hookflow-pg-floor';
