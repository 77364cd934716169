/**
 * Network-bound executions hold no compute slot (SPEC 7d): with HOOKFLOW_EXECUTOR_CONCURRENCY=2,
 * 50 executions whose `http` step calls an API that holds its answer are all in flight at once
 * (the API sees 50 requests open together), and a host that holds its answers does not starve
 * calls to another one. A parent waiting on its sub-workflow holds no place in flight: with
 * HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT=2, four parents whose children need those places all finish.
 * Executions that compute (a `code` step: CPU on its sandbox thread, not a wait on the outside
 * world) are not all started at once: one per compute slot, the rest wait their turn.
 * Asserted by what the APIs and /metrics see, not by timing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

/** An API that answers nothing until `release()`, and counts the requests open at once. */
interface HeldApi {
  url: string;
  open: number;
  most: number;
  seen: number;
  release(): void;
  close(): Promise<void>;
}

async function heldApi({ hold }: { hold: boolean }): Promise<HeldApi> {
  const waiting: http.ServerResponse[] = [];
  let held = hold;
  const api: HeldApi = {
    url: '',
    open: 0,
    most: 0,
    seen: 0,
    release() {
      held = false;
      for (const res of waiting.splice(0)) res.end('{"ok":true}');
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server = http.createServer((req, res) => {
    req.resume();
    api.seen++;
    api.open++;
    api.most = Math.max(api.most, api.open);
    res.on('close', () => api.open--);
    res.setHeader('content-type', 'application/json');
    if (held) waiting.push(res);
    else res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return api;
}

async function send(server: TestServer, path: string, n: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(`${server.url}/webhook/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i }),
      });
      expect(res.status).toBe(200);
      return res.headers.get('x-hookflow-execution-id')!;
    }),
  );
}

async function statuses(server: TestServer, ids: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const id of ids) {
    const res = await server.api('GET', `/api/v1/executions/${id}`);
    counts[res.body.status] = (counts[res.body.status] ?? 0) + 1;
  }
  return counts;
}

describe('executions waiting on the network', () => {
  let server: TestServer;
  const apis: HeldApi[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      env: {
        HOOKFLOW_EXECUTOR_CONCURRENCY: '2',
        HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: '64',
        HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
      },
    });
  });
  afterAll(async () => {
    for (const api of apis) api.release();
    await server?.close();
    for (const api of apis) await api.close();
  });

  const workflow = (path: string, url: string) =>
    createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [
        { name: 'call', type: 'http', method: 'POST', url, body: { n: '{{ body.i }}' } },
        { name: 'done', type: 'set', fields: { ok: '{{ $steps.call.output.body.ok }}' } },
      ],
    });

  it('50 executions are in flight at once with 2 compute slots: the API sees 50 open requests', async () => {
    const api = await heldApi({ hold: true });
    apis.push(api);
    await workflow('fifty', `${api.url}/held`);
    const ids = await send(server, 'fifty', 50);
    await eventually(async () => api.open === 50, 20_000);
    expect(api.most).toBe(50);
    // What the Executions page shows meanwhile: 50 in flight, nothing left queued.
    const backlog = await server.api('GET', '/api/v1/executions/backlog');
    expect(backlog.status).toBe(200);
    expect(backlog.body).toMatchObject({ queued: 0, oldestQueuedAt: null, inFlight: 50 });
    api.release();
    await eventually(async () => (await statuses(server, ids)).succeeded === 50, 20_000);
  });

  it('executions that compute are in flight one per compute slot (and while their results are stored), whatever the backlog', async () => {
    await createActiveWorkflow(server, {
      name: 'busy',
      trigger: { path: 'busy' },
      steps: [
        {
          name: 'spin',
          type: 'code',
          source: 'const t = Date.now(); while (Date.now() - t < 30) {} return { i: $input.body.i }',
        },
      ],
    });
    const ids = await send(server, 'busy', 40);
    let most = 0;
    let done = 0;
    while (done < 40) {
      const metrics = String((await server.api('GET', '/metrics')).body);
      most = Math.max(most, Number(/^hookflow_executions_in_flight (\d+)$/m.exec(metrics)![1]));
      done = (await statuses(server, ids)).succeeded ?? 0;
    }
    // Two computing on the engine thread, and those whose results are being stored (the gauge
    // counts an execution until then). Were a code step's run a wait on the outside world, all 40
    // would be started at once, waiting for the sandbox thread.
    expect(most).toBeGreaterThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(8);
  });

  it('a host that holds its answers does not starve calls to another host', async () => {
    const slow = await heldApi({ hold: true });
    const fast = await heldApi({ hold: false });
    apis.push(slow, fast);
    await workflow('slow-host', `${slow.url}/held`);
    await workflow('fast-host', `${fast.url}/now`);
    // More calls to the slow host than its socket cap (64): the rest wait for its sockets.
    const slowIds = await send(server, 'slow-host', 100);
    await eventually(async () => slow.open === 64, 20_000);
    const fastIds = await send(server, 'fast-host', 30);
    await eventually(async () => (await statuses(server, fastIds)).succeeded === 30, 20_000);
    // The slow host answered nothing meanwhile: every one of its executions is still running.
    expect(await statuses(server, slowIds)).toEqual({ running: 100 });
    expect(slow.most).toBe(64);
    slow.release();
    await eventually(async () => (await statuses(server, slowIds)).succeeded === 100, 30_000);
    expect(slow.seen).toBe(100);
  });
});

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('parents waiting on sub-workflows, two places in flight ($dialect)', ({ postgres }) => {
  let server: TestServer;
  let api: HeldApi | undefined;

  beforeAll(async () => {
    server = await startTestServer({
      postgres,
      env: { HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: '2', HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
    });
  });
  afterAll(async () => {
    api?.release();
    await server?.close();
    await api?.close();
  });

  it('four parents each waiting for a child that calls out all finish: a waiting parent holds no place', async () => {
    api = await heldApi({ hold: true });
    const child = await createWorkflow(server, {
      name: 'child',
      steps: [
        { name: 'call', type: 'http', method: 'POST', url: `${api.url}/held`, body: { n: '{{ body }}' } },
        { name: 'done', type: 'set', fields: { n: '{{ $trigger.body }}' } },
      ],
    });
    expect((await server.api('POST', `/api/v1/workflows/${child.id}/publish`)).status).toBe(200);
    await createActiveWorkflow(server, {
      name: 'parent',
      trigger: { path: 'parent' },
      steps: [{ name: 'sub', type: 'workflow', workflowId: child.id, input: '{{ body.i }}', wait: true }],
    });
    const ids = await send(server, 'parent', 4);
    // Both places are held by children calling the API while their parents wait: were the
    // parents holding places, no child could start and the API would see nothing.
    await eventually(async () => api!.open === 2, 20_000);
    expect((await statuses(server, ids)).waiting).toBeGreaterThanOrEqual(2);
    api.release();
    await eventually(async () => (await statuses(server, ids)).succeeded === 4, 30_000);
    expect(api.most).toBe(2);
    expect(api.seen).toBe(4);
    const outputs = await Promise.all(
      ids.map(async (id) => (await server.api('GET', `/api/v1/executions/${id}`)).body.steps[0].output.n),
    );
    expect(outputs.sort()).toEqual([0, 1, 2, 3]);
  });
});
