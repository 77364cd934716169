/**
 * Distributed mode as it runs in production: `hookflow webhook` and `hookflow worker` child
 * processes (dist/ is built by test/global-setup.ts) sharing a fresh PostgreSQL database, the API
 * token created with the real CLI, and one encryption key for all. `sql` reads the database
 * directly, for what the API does not show (which worker holds a lease).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { expect } from 'vitest';
import { freePort, runCli, serveArgs } from './process.js';
import { createTestDatabase, endPool, type TestDatabase } from './postgres.js';
import type { ApiResponse } from './server.js';
import { tempDir } from './temp-dir.js';

export type Role = 'webhook' | 'worker';

export interface RoleProcess {
  role: Role;
  child: ChildProcess;
  pid: number;
  /** http://127.0.0.1:<port> (webhook processes only). */
  url: string;
  output(): string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
}

export interface Cluster {
  db: TestDatabase;
  /** Env every process of the cluster shares. */
  env: Record<string, string>;
  token: string;
  sql: pg.Pool;
  webhooks: RoleProcess[];
  workers: RoleProcess[];
  /** Start one more process of a role (added to webhooks or workers). */
  start(role: Role, env?: Record<string, string>): Promise<RoleProcess>;
  /** An API call with the token against one webhook process. */
  api(target: RoleProcess, method: string, route: string, body?: unknown): Promise<ApiResponse>;
  close(): Promise<void>;
}

const ENCRYPTION_KEY = 'distributed-test-key-0123456789abcdef';

export async function startCluster({
  webhooks = 2,
  workers = 2,
  env: extra = {},
  db: given,
}: {
  webhooks?: number;
  workers?: number;
  env?: Record<string, string>;
  /** The database to share (default: a fresh one on the machine's PostgreSQL); dropped on close. */
  db?: TestDatabase;
} = {}): Promise<Cluster> {
  const db = given ?? (await createTestDatabase());
  const env: Record<string, string> = {
    HOOKFLOW_DATABASE_URL: db.url,
    HOOKFLOW_ENCRYPTION_KEY: ENCRYPTION_KEY,
    HOOKFLOW_LOG_LEVEL: 'info',
    ...extra,
  };
  // Creates the schema too, before any server starts (they would serialise on the migration lock).
  const created = await runCli(['tokens', 'create', '--name', 't'], { ...env, HOOKFLOW_DATA_DIR: tempDir() });
  if (created.code !== 0) throw new Error(`tokens create failed:\n${created.stderr}`);
  const token = created.stdout.trim().split('\n').at(-1)!;
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });

  const cluster: Cluster = {
    db,
    env,
    token,
    sql,
    webhooks: [],
    workers: [],
    async start(role, more = {}) {
      const proc = await startRole(role, { ...env, ...more });
      (role === 'webhook' ? cluster.webhooks : cluster.workers).push(proc);
      return proc;
    },
    async api(target, method, route, body) {
      const res = await fetch(`${target.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const parsed =
        (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async close() {
      const all = [...cluster.webhooks, ...cluster.workers];
      for (const p of all)
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await Promise.all(all.map((p) => p.exited));
      await endPool(sql);
      await db.drop();
    },
  };
  try {
    await Promise.all([
      ...Array.from({ length: webhooks }, () => cluster.start('webhook')),
      ...Array.from({ length: workers }, () => cluster.start('worker')),
    ]);
  } catch (err) {
    await cluster.close();
    throw err;
  }
  return cluster;
}

/** Start `hookflow <role>`; ready when a webhook process answers /healthz, a worker logs its start. */
async function startRole(role: Role, env: Record<string, string>): Promise<RoleProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, serveArgs(role), {
    env: {
      ...process.env,
      HOOKFLOW_HOST: '127.0.0.1',
      HOOKFLOW_PORT: String(port),
      HOOKFLOW_BASE_URL: url,
      HOOKFLOW_DATA_DIR: tempDir(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Generous: CI runs this on 2 cores beside other test files.
  const deadline = Date.now() + 40_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hookflow ${role} exited early:\n${out}`);
    if (role === 'worker') {
      if (out.includes('"msg":"executor started"')) break;
    } else {
      try {
        if ((await fetch(`${url}/healthz`)).ok) break;
      } catch {
        // not listening yet
      }
    }
    if (Date.now() > deadline) throw new Error(`hookflow ${role} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { role, child, pid: child.pid!, url, output: () => out, exited };
}

/** Poll until fn returns a truthy value; throws after timeoutMs. Returns the value and the time it took. */
export async function within<T>(
  timeoutMs: number,
  fn: () => Promise<T | undefined | false>,
  intervalMs = 20,
): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  for (;;) {
    const value = await fn();
    if (value) return { value, ms: Date.now() - started };
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl on a free port, data in a temp dir), for
 * tests that stop or restart the server: the machine's shared one on 5432 serves other test
 * files in parallel. Run as the `postgres` OS user when the tests run as root (initdb refuses
 * root), as the current user otherwise. fsync is off: a clean stop (`-m fast`) still keeps every
 * committed row, and the tests do not crash the server's host.
 */
export interface PgInstance {
  port: number;
  /** Superuser URL of its `postgres` database (trust auth). */
  adminUrl: string;
  /** A fresh database on it (dropped again by `drop()`). */
  createDatabase(): Promise<TestDatabase>;
  /** `pg_ctl stop -m fast`: every session is terminated, as in a restart or failover. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stop the server for good and delete its data. */
  close(): Promise<void>;
}

const run = promisify(execFile);

function pgBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const bin = path.join(root, v, 'bin', name);
    if (fs.existsSync(bin)) return bin;
  }
  return name; // on PATH
}

export async function startPgInstance(): Promise<PgInstance> {
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join('/tmp', 'hookflow-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) fs.chownSync(dir, ...pgOwner());
  const exec = (bin: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', pgBin(bin), ...args]) : run(pgBin(bin), args);
  await exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const log = path.join(dir, 'server.log');
  const start = async () => {
    await exec('pg_ctl', ['start', '-w', '-t', '30', '-D', data, '-l', log, '-o', options]);
  };
  const stop = async () => {
    await exec('pg_ctl', ['stop', '-w', '-t', '30', '-m', 'fast', '-D', data]);
  };
  await start();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    adminUrl,
    start,
    stop,
    async createDatabase() {
      const name = `hookflow_test_${Math.random().toString(16).slice(2, 10)}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`create database ${name}`).finally(() => admin.end());
      return {
        url: `postgres://postgres@127.0.0.1:${port}/${name}`,
        // The whole server goes at close(); nothing to drop separately.
        drop: async () => undefined,
      };
    },
    async close() {
      await stop().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgOwner(): [number, number] {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root, but there is no postgres OS user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return [Number(uid), Number(gid)];
}

/** Creates a workflow through the cluster's first webhook process and activates it; its id. */
export async function activeWorkflow(c: Cluster, body: Record<string, unknown>): Promise<string> {
  const hook = c.webhooks[0]!;
  const res = await c.api(hook, 'POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect((await c.api(hook, 'POST', `/api/v1/workflows/${res.body.id}/activate`)).status).toBe(200);
  return res.body.id as string;
}
