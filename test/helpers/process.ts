/** Run the real `hookflow` command as a child process (dist/ is built by test/global-setup.ts). */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { NODE_FLAGS } from '../../bin/node-flags.js';

export const BIN = path.resolve(import.meta.dirname, '../../bin/hookflow.js');

/**
 * node's arguments for a serving command (`start`, `webhook`, `worker`) as bin/hookflow.js runs it:
 * the V8 flags first, so that it does not start a second node, and the child's pid is the server
 * itself (a SIGKILL is a crash of the server; its pid is the one in `locked_by`).
 */
export const serveArgs = (...args: string[]): string[] => [...NODE_FLAGS, BIN, ...args];

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, HOOKFLOW_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Start `hookflow start` and wait until /healthz answers. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, serveArgs('start'), {
    env: {
      ...process.env,
      HOOKFLOW_LOG_LEVEL: 'info',
      HOOKFLOW_HOST: '127.0.0.1',
      HOOKFLOW_PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hookflow exited early:\n${out}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`hookflow did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url, output: () => out, exited };
}

/**
 * A store with an API token made by the CLI (`env` says where), and `hookflow start` on it serving
 * `workflow`, created and activated: what the crash and drain tests set up before they stop the
 * process. `auth`: the token's headers for API calls (to this process or a later one on the store).
 */
export async function startWithWorkflow(
  env: Record<string, string>,
  workflow: Record<string, unknown>,
): Promise<{ server: ServerProcess; auth: Record<string, string>; workflowId: string }> {
  const created = await runCli(['tokens', 'create', '--name', 'test'], env);
  if (created.code !== 0) throw new Error(created.stderr);
  const token = created.stdout.trim().split('\n').at(-1)!;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const server = await startServerProcess(env);
  try {
    const res = await fetch(`${server.url}/api/v1/workflows`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(workflow),
    });
    if (res.status !== 201) throw new Error(`creating the workflow: ${res.status} ${await res.text()}`);
    const workflowId = ((await res.json()) as { id: string }).id;
    const activated = await fetch(`${server.url}/api/v1/workflows/${workflowId}/activate`, {
      method: 'POST',
      headers: auth,
    });
    if (activated.status !== 200) throw new Error(`activating the workflow: ${activated.status}`);
    return { server, auth, workflowId };
  } catch (err) {
    server.child.kill('SIGKILL');
    throw err;
  }
}
