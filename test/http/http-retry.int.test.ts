/**
 * `http` retries (SPEC 7c, issue 19) against a local receiver that answers from a script: 503
 * twice then 200; giving up after the last attempt; `on` limits what is retried; network errors;
 * `Retry-After` of a second or more parks the execution as `waiting` (no slot held) and it resumes
 * with its next attempt — also across a restart of the server during the pause. Every attempt is in
 * the step record's `attempts`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import {
  createActiveWorkflow,
  eventually,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

interface Answer {
  status: number;
  headers?: Record<string, string>;
}

const scripts = new Map<string, Answer[]>();
const hits = new Map<string, number[]>();
let receiver: http.Server;
let receiverUrl = '';
let server: TestServer;
/** Starts (or restarts) the server of the current block on its own store. */
let start: () => Promise<TestServer>;
const env = { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_EXECUTOR_CONCURRENCY: '2' };

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const times = hits.get(path) ?? [];
    times.push(Date.now());
    hits.set(path, times);
    const script = scripts.get(path) ?? [{ status: 200 }];
    const answer = script[Math.min(times.length - 1, script.length - 1)]!;
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify({ n: times.length }));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

const retrying = (path: string, retry: Record<string, unknown>, url = `${receiverUrl}/${path}`) =>
  createActiveWorkflow(server, {
    name: path,
    trigger: { path },
    steps: [{ name: 'call', type: 'http', method: 'POST', url, body: { hello: 'world' }, retry }],
  });

const fire = async (path: string) => {
  const res = await fetch(`${server.url}/webhook/${path}`, { method: 'POST' });
  expect(res.status).toBe(200);
  return ((await res.json()) as { executionId: string }).executionId as string;
};

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('http retry on $dialect', ({ postgres }) => {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    // The blocks run one after the other: each starts with an empty receiver log.
    hits.clear();
    scripts.clear();
    if (postgres) {
      db = await createTestDatabase();
      const pgEnv = {
        ...env,
        HOOKFLOW_DATABASE_URL: db.url,
        HOOKFLOW_ENCRYPTION_KEY: 'test-key-for-postgres-0123456789abcdef',
      };
      start = () => startTestServer({ env: pgEnv });
    } else {
      const dataDir = tempDir();
      start = () => startTestServer({ dataDir, env });
    }
    server = await start();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('503 twice then 200: three attempts recorded, the execution succeeds', async () => {
    scripts.set('/flaky', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    await retrying('flaky', { attempts: 3, backoffMs: 100 });
    const execution = await finishedExecution(server, await fire('flaky'));
    expect(execution.status).toBe('succeeded');
    const step = execution.steps[0];
    expect(step.output).toMatchObject({ status: 200, body: { n: 3 } });
    expect(step.attempts).toEqual([
      { at: expect.any(String), status: 503 },
      { at: expect.any(String), status: 503 },
      { at: expect.any(String), status: 200 },
    ]);
    expect(hits.get('/flaky')).toHaveLength(3);
    expect(step.request).toMatchObject({ method: 'POST', url: `${receiverUrl}/flaky` });
  });

  it('gives up after the last attempt, with every attempt recorded', async () => {
    scripts.set('/down', [{ status: 502 }]);
    await retrying('down', { attempts: 3, backoffMs: 50 });
    const execution = await finishedExecution(server, await fire('down'));
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain('answered 502 (attempt 3 of 3)');
    expect(execution.steps[0].attempts.map((a: { status: number }) => a.status)).toEqual([502, 502, 502]);
    expect(hits.get('/down')).toHaveLength(3);
  });

  it('retries only what `on` names; without retry there is one attempt', async () => {
    scripts.set('/only429', [{ status: 503 }, { status: 200 }]);
    await retrying('only429', { attempts: 3, backoffMs: 50, on: ['429'] });
    const execution = await finishedExecution(server, await fire('only429'));
    expect(execution.status).toBe('failed');
    expect(execution.steps[0].attempts).toHaveLength(1);

    scripts.set('/once', [{ status: 500 }, { status: 200 }]);
    await createActiveWorkflow(server, {
      name: 'once',
      trigger: { path: 'once' },
      steps: [{ name: 'call', type: 'http', url: `${receiverUrl}/once` }],
    });
    const once = await finishedExecution(server, await fire('once'));
    expect(once.status).toBe('failed');
    expect(once.steps[0].attempts).toEqual([{ at: expect.any(String), status: 500 }]);
  });

  it('retries network errors', async () => {
    // A port nothing listens on: connection refused each time.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await retrying('refused', { attempts: 2, backoffMs: 50, on: ['network'] }, `http://127.0.0.1:${port}/x`);
    const execution = await finishedExecution(server, await fire('refused'));
    expect(execution.status).toBe('failed');
    expect(execution.steps[0].attempts).toEqual([
      { at: expect.any(String), error: expect.stringContaining('ECONNREFUSED') },
      { at: expect.any(String), error: expect.stringContaining('ECONNREFUSED') },
    ]);
  });

  it('honours Retry-After: a pause of a second or more parks the execution as waiting', async () => {
    scripts.set('/limited', [{ status: 429, headers: { 'retry-after': '2' } }, { status: 200 }]);
    await retrying('limited', { attempts: 2, backoffMs: 10 });
    const id = await fire('limited');
    const waiting = await eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      return e.status === 'waiting' ? e : undefined;
    }, 5_000);
    expect(waiting.steps[0]).toMatchObject({ status: 'waiting', attempts: [{ status: 429 }] });
    const execution = await finishedExecution(server, id);
    expect(execution.status).toBe('succeeded');
    expect(execution.steps[0].attempts.map((a: { status: number }) => a.status)).toEqual([429, 200]);
    const [first, second] = hits.get('/limited')!;
    expect(second! - first!).toBeGreaterThanOrEqual(1_900);
  });

  it('a restart during a retry pause resumes with the next attempt', async () => {
    scripts.set('/restart', [{ status: 503, headers: { 'retry-after': '3' } }, { status: 200 }]);
    await retrying('restart', { attempts: 2, backoffMs: 10 });
    const id = await fire('restart');
    await eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      return e.status === 'waiting' ? e : undefined;
    }, 5_000);
    await server.close();
    server = await start();
    const execution = await finishedExecution(server, id, 15_000);
    expect(execution.status).toBe('succeeded');
    expect(execution.steps[0].attempts.map((a: { status: number }) => a.status)).toEqual([503, 200]);
    expect(hits.get('/restart')).toHaveLength(2);
  });

  it('refuses a retry setting out of range on save', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'bad retry',
      steps: [
        { name: 'call', type: 'http', url: 'https://example.com', retry: { attempts: 0, on: ['4xx'] } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const fields = res.body.fields.map((f: { field: string }) => f.field);
    expect(fields.some((f: string) => f.startsWith('/steps/0/retry'))).toBe(true);
  });
});
