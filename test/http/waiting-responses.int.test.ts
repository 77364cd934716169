/**
 * Callers of `lastStep` and `respondStep` webhooks wait for their execution for up to its timeoutMs.
 * They must not hold the places of new webhook calls (HOOKFLOW_MAX_CONCURRENT_REQUESTS): callers
 * parked on one slow workflow made every other webhook answer 503. They wait under a cap of their
 * own (HOOKFLOW_MAX_WAITING_RESPONSES); past it, a call is refused before anything is stored, so a
 * sender's retry sends nothing twice; a caller that goes away gives its place back.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

/** Places for webhook calls in progress. */
const PLACES = 2;
/** Places for callers waiting for their execution: more than PLACES, as by default. */
const WAITING = 4;

/** The slow remote API: holds each request until `release()`. */
const held: http.ServerResponse[] = [];
let remote: http.Server;
let remoteUrl: string;
let server: TestServer;

function release(): void {
  for (const res of held.splice(0))
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}');
}

beforeAll(async () => {
  remote = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
  server = await startTestServer({
    env: {
      HOOKFLOW_MAX_CONCURRENT_REQUESTS: String(PLACES),
      HOOKFLOW_MAX_WAITING_RESPONSES: String(WAITING),
      HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
    },
  });
  const slowCall = { name: 'call', type: 'http', method: 'GET', url: `${remoteUrl}/slow` };
  await createActiveWorkflow(server, {
    name: 'slow',
    trigger: { path: 'slow', response: { mode: 'lastStep', timeoutMs: 20_000 } },
    steps: [slowCall],
  });
  await createActiveWorkflow(server, {
    name: 'slow-respond',
    trigger: { path: 'slow-respond', response: { mode: 'respondStep', timeoutMs: 20_000 } },
    steps: [slowCall, { name: 'answer', type: 'respond', status: 201, body: { done: '{{ $.body.slow }}' } }],
  });
  // Answers at once, and one that waits for a quick execution (a set step).
  await createActiveWorkflow(server, { name: 'quick', trigger: { path: 'quick' } });
  await createActiveWorkflow(server, {
    name: 'quick-wait',
    trigger: { path: 'quick-wait', response: { mode: 'lastStep' } },
    steps: [{ name: 'greet', type: 'set', fields: { greeting: 'hi' } }],
  });
});
afterAll(async () => {
  release();
  await server?.close();
  remote?.closeAllConnections();
  await new Promise<void>((r) => (remote ? remote.close(() => r()) : r()));
});

const call = (path: string, signal?: AbortSignal) =>
  fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
    signal,
  });

async function executionCount(name: string): Promise<number> {
  const wf = (await server.api('GET', '/api/v1/workflows?limit=200')).body.items.find(
    (w: { name: string }) => w.name === name,
  );
  const list = await server.api('GET', `/api/v1/executions?workflowId=${wf.id}&limit=200`);
  return list.body.items.length;
}

/**
 * `count` callers parked on the slow workflows, each once its execution has reached the remote
 * API. One after the other: arriving together, more than PLACES would be refused while stored.
 */
async function park(count: number, signals: AbortSignal[] = []) {
  const answers: Promise<{ status: number; body: unknown }>[] = [];
  for (let i = 0; i < count; i++) {
    const before = held.length;
    const answer = call(i === 0 ? 'slow-respond' : 'slow', signals[i]).then(async (res) => ({
      status: res.status,
      body: await res.json(),
    }));
    // Keep a failure visible where it is awaited rather than as an unhandled rejection.
    answer.catch(() => undefined);
    answers.push(answer);
    await eventually(async () => held.length === before + 1, 10_000);
  }
  return answers;
}

describe('callers waiting for their execution', () => {
  it('do not take the places of new calls to other webhooks, and are capped apart', async () => {
    const parked = await park(WAITING);

    // Twice PLACES callers are parked: other webhooks still answer, one by one and all at once.
    for (let i = 0; i < 3; i++) {
      const res = await call('quick');
      expect(res.status).toBe(200);
      expect(((await res.json()) as { message: string }).message).toBe('Workflow was started');
    }
    const together = await Promise.all(Array.from({ length: PLACES }, () => call('quick')));
    expect(together.map((r) => r.status)).toEqual(Array(PLACES).fill(200));
    await Promise.all(together.map((r) => r.arrayBuffer()));

    // Every waiting place is taken: a call that would wait is refused before anything is stored.
    const slowBefore = await executionCount('slow');
    const quickWaitBefore = await executionCount('quick-wait');
    for (const path of ['slow', 'quick-wait']) {
      const refused = await call(path);
      expect(refused.status, path).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('x-hookflow-execution-id')).toBeNull();
      expect(((await refused.json()) as { code: string }).code).toBe('overloaded');
    }
    expect(await executionCount('slow')).toBe(slowBefore);
    expect(await executionCount('quick-wait')).toBe(quickWaitBefore);

    // The parked callers get their answers once the remote API answers, and their places back.
    release();
    const [responded, ...lastStep] = await Promise.all(parked);
    expect(responded).toEqual({ status: 201, body: { done: true } });
    for (const answer of lastStep)
      expect(answer).toMatchObject({ status: 200, body: { status: 200, body: { slow: true } } });
    const again = await call('quick-wait');
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ greeting: 'hi' });
  });

  it('give their waiting place back when they go away', async () => {
    const controllers = Array.from({ length: WAITING }, () => new AbortController());
    const parked = await park(
      WAITING,
      controllers.map((c) => c.signal),
    );
    expect((await call('quick-wait')).status).toBe(503);
    controllers[1]!.abort();
    await expect(parked[1]).rejects.toThrow();
    // Well before the 20 s the abandoned caller would have waited.
    await eventually(async () => {
      const res = await call('quick-wait');
      await res.arrayBuffer();
      return res.status === 200;
    }, 3_000);
    release();
    const rest = await Promise.all([parked[0], parked[2], parked[3]]);
    expect(rest.map((a) => a!.status)).toEqual([201, 200, 200]);
  });
});
