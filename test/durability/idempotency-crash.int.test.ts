/**
 * An execution's outbound call keeps its `Idempotency-Key` across a crash (SPEC 7d): `hookflow
 * start` is SIGKILLed while the API it calls holds the request unanswered; after a restart on the
 * same data dir the execution runs again (its next attempt) and sends the call again with the same
 * key, so an API that honours the header applies it once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess, startWithWorkflow } from '../helpers/process.js';
import { json, tempDir } from '../helpers/server.js';

const children: ServerProcess[] = [];
let receiver: http.Server;
let receiverUrl = '';
/** The Idempotency-Key of each request, in order; the first request is never answered. */
const keys: (string | undefined)[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    keys.push(req.headers['idempotency-key'] as string | undefined);
    if (keys.length > 1) res.end('{"ok":true}');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/charge`;
});

afterAll(async () => {
  for (const c of children) c.child.kill('SIGKILL');
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

it('a call cut off by a SIGKILL is sent again after the restart with the same Idempotency-Key', async () => {
  const env = {
    HOOKFLOW_DATA_DIR: tempDir(),
    HOOKFLOW_LOG_LEVEL: 'warn',
    HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
  };
  const { server: first, auth } = await startWithWorkflow(env, {
    name: 'charge',
    trigger: { path: 'charge' },
    steps: [{ name: 'charge', type: 'http', method: 'POST', url: receiverUrl, body: { amount: 5 } }],
  });
  children.push(first);
  const res = await fetch(`${first.url}/webhook/charge`, { method: 'POST', body: '{}' });
  expect(res.status).toBe(200);
  const { executionId } = await json(res);

  // The API has the call and holds it: the process dies in the middle of it.
  const deadline = Date.now() + 10_000;
  while (keys.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(keys).toEqual([`${executionId}.charge`]);
  first.child.kill('SIGKILL');
  await first.exited;

  const second = await startServerProcess(env);
  children.push(second);
  let execution: { status: string; attempt: number } | undefined;
  for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    execution = await json(await fetch(`${second.url}/api/v1/executions/${executionId}`, { headers: auth }));
    if (execution?.status === 'succeeded' || execution?.status === 'failed') break;
  }
  expect(execution).toMatchObject({ status: 'succeeded', attempt: 2 });
  expect(keys).toEqual([`${executionId}.charge`, `${executionId}.charge`]);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
}, 60_000);
