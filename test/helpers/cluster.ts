/**
 * Distributed mode as it runs in production: `hookflow webhook` and `hookflow worker` child
 * processes (dist/ is built by test/global-setup.ts) sharing a fresh PostgreSQL database, the API
 * token created with the real CLI, and one encryption key for all. `sql` reads the database
 * directly, for what the API does not show (which worker holds a lease).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import pg from 'pg';
import { BIN, freePort, runCli } from './process.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import type { ApiResponse } from './server.js';
import { tempDir } from './server.js';

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
}: {
  webhooks?: number;
  workers?: number;
  env?: Record<string, string>;
} = {}): Promise<Cluster> {
  const db = await createTestDatabase();
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
      await sql.end();
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
  const child = spawn(process.execPath, [BIN, role], {
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
  const deadline = Date.now() + 20_000;
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
