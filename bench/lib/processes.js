/** Child processes (started, watched, stopped), cleanup on exit, and hookflow's API and CLI. */
import { execFile, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { NODE_FLAGS } from '../../bin/node-flags.js';
import { sleep } from './util.js';

export const root = path.resolve(import.meta.dirname, '../..');

/**
 * node's arguments for a serving `hookflow` command as bin/hookflow.js runs it: the V8 flags first,
 * so that it does not start a second node and the child's pid (whose RSS and CPU are measured) is
 * the server itself.
 */
export const hookflowArgs = (...args) => [...NODE_FLAGS, path.join(root, 'bin/hookflow.js'), ...args];

/** Everything to undo, newest first: child processes, temp dirs. Runs on success, failure and Ctrl-C. */
export const cleanups = [];
let cleaning;
export function cleanup() {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`bench: cleanup: ${err.message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

export function startChild(name, command, args, env) {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Kept for the error message if the child dies; not printed otherwise.
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-8_000);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  let exit;
  child.once('exit', (code, signal) => {
    exit = { code, signal };
  });
  cleanups.push(() => stopChild(child));
  return {
    name,
    pid: child.pid,
    stop: () => stopChild(child),
    assertAlive() {
      if (exit) throw new Error(`${name} exited (${exit.signal ?? exit.code}):\n${output}`);
    },
    async waitForOutput(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        this.assertAlive();
        if (Date.now() > deadline)
          throw new Error(`${name} did not print ${pattern} within ${timeoutMs} ms:\n${output}`);
        await sleep(20);
      }
    },
  };
}

/** SIGTERM (hookflow drains and closes its store), then SIGKILL if it takes longer than 10 s. */
export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function waitForReady(url, child) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    child.assertAlive();
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`hookflow was not ready at ${url} within 30 s`);
    await sleep(50);
  }
}

/**
 * An API client with a new token, made by `hookflow tokens create` on the store `env` points at
 * (by the checkout at `tree`: the one whose server uses that store).
 */
export async function tokenClient(base, env, name, tree = root) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(tree, 'bin/hookflow.js'), 'tokens', 'create', '--name', name],
    { env, cwd: tree },
  );
  return apiClient(base, stdout.trim().split('\n').at(-1));
}

/** A function calling the API with `token` (kept as its `token` property, for /metrics). */
export function apiClient(base, token) {
  const client = async (method, route, body) => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  client.token = token;
  return client;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export const BENCH_OWNED_ENV = [
  'HOOKFLOW_DATA_DIR',
  'HOOKFLOW_DATABASE_URL',
  'HOOKFLOW_PORT',
  'HOOKFLOW_HOST',
  'HOOKFLOW_BASE_URL',
  'HOOKFLOW_LOG_LEVEL',
];

/**
 * The environment of a hookflow server the bench starts: tuning variables (HOOKFLOW_SQLITE_SYNCHRONOUS,
 * HOOKFLOW_EXECUTOR_CONCURRENCY …) pass through; where the data lives and how hookflow is reached
 * are the bench's own.
 */
export function serverEnv(dataDir, port) {
  return {
    ...withoutBenchOwnedEnv(process.env),
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_PORT: String(port),
    HOOKFLOW_HOST: '127.0.0.1',
    HOOKFLOW_LOG_LEVEL: 'warn',
  };
}

export function withoutBenchOwnedEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !BENCH_OWNED_ENV.includes(k)));
}

/** The HOOKFLOW_* settings passed through to hookflow, for the report header. */
export function tuning() {
  return Object.fromEntries(
    Object.entries(withoutBenchOwnedEnv(process.env)).filter(([k]) => k.startsWith('HOOKFLOW_')),
  );
}
