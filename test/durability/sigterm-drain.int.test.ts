/**
 * A deploy loses no work (SPEC 7d): `hookflow start` gets SIGTERM while 200 executions wait on
 * outbound calls that an API holds unanswered. It stops claiming, waits for them until its drain
 * deadline, then gives them back to the queue (as after a crash, never `failed`) and exits. After a
 * restart on the same data dir every one of them runs again as its next attempt, sends its call
 * again with the same Idempotency-Key, and succeeds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess, startWithWorkflow } from '../helpers/process.js';
import { json, tempDir } from '../helpers/server.js';

const N = 200;
const children: ServerProcess[] = [];
let api: http.Server;
let apiUrl = '';
/** Whether the API answers; until then it holds every request open. */
let answering = false;
let open = 0;
/** Idempotency-Key → how many times it was sent. */
const keys = new Map<string, number>();

beforeAll(async () => {
  api = http.createServer((req, res) => {
    req.resume();
    const key = String(req.headers['idempotency-key']);
    keys.set(key, (keys.get(key) ?? 0) + 1);
    open++;
    res.on('close', () => open--);
    if (answering) res.end('{"ok":true}');
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/charge`;
});

afterAll(async () => {
  for (const c of children) c.child.kill('SIGKILL');
  api?.closeAllConnections();
  await new Promise((r) => api?.close(r));
});

const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 30_000) => {
  for (const end = Date.now() + ms; !(await done()); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
};

it('SIGTERM during 200 outbound calls: the process exits at its drain deadline and, restarted, runs every one to success', async () => {
  const env = {
    HOOKFLOW_DATA_DIR: tempDir(),
    HOOKFLOW_LOG_LEVEL: 'warn',
    HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
    // All 200 calls open at once (the default per-host cap is 128).
    HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: '256',
  };
  const { server: first, auth } = await startWithWorkflow(env, {
    name: 'charge',
    trigger: { path: 'charge' },
    steps: [
      { name: 'charge', type: 'http', method: 'POST', url: apiUrl, body: { n: '{{ body.n }}' } },
      { name: 'done', type: 'set', fields: { ok: '{{ $steps.charge.output.body.ok }}' } },
    ],
  });
  children.push(first);
  const ids = await Promise.all(
    Array.from({ length: N }, async (_, n) => {
      const res = await fetch(`${first.url}/webhook/charge`, { method: 'POST', body: JSON.stringify({ n }) });
      expect(res.status).toBe(200);
      return (await json(res)).executionId as string;
    }),
  );
  await until('200 calls open at the API', () => open === N);

  const stoppedAt = Date.now();
  first.child.kill('SIGTERM');
  // The API never answers: only the drain deadline lets the process exit.
  expect(await first.exited).toBe(0);
  console.log(`SIGTERM with ${N} calls in flight: exited after ${Date.now() - stoppedAt} ms`);
  expect(first.output()).toContain('go back to the queue');
  expect(first.output()).not.toContain('"level":50');

  answering = true;
  const second = await startServerProcess(env);
  children.push(second);
  const statuses = async () => {
    const counts: Record<string, number> = {};
    for (const id of ids) {
      const e = await json(await fetch(`${second.url}/api/v1/executions/${id}`, { headers: auth }));
      counts[`${e.status}/${e.attempt}`] = (counts[`${e.status}/${e.attempt}`] ?? 0) + 1;
    }
    return counts;
  };
  await until('every execution finished', async () => (await statuses())['succeeded/2'] === N, 60_000);
  expect(await statuses()).toEqual({ 'succeeded/2': N });
  // Each call was sent twice, the second time with the key of the first.
  expect(keys.size).toBe(N);
  expect([...keys.values()].every((n) => n === 2)).toBe(true);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
}, 120_000);
