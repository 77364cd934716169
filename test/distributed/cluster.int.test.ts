/**
 * Distributed mode (SPEC 10) with two `hookflow webhook` and two `hookflow worker` processes on one
 * PostgreSQL database: the trigger registry follows changes made through any process within a
 * second (and after a lost bus connection), a test listener opened through one process captures a
 * request that lands on the other, synchronous response modes answer from a webhook-only process,
 * and every accepted request is executed exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, type RoleProcess, startCluster, within } from '../helpers/cluster.js';
import { runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/server.js';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import fs from 'node:fs';
import path from 'node:path';

let cluster: Cluster;
let a: RoleProcess;
let b: RoleProcess;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  // Workers call the downstream service on loopback.
  cluster = await startCluster({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  [a, b] = cluster.webhooks as [RoleProcess, RoleProcess];
});

afterAll(async () => {
  await cluster?.close();
  await downstream?.close();
});

const call = (p: RoleProcess, route: string, init: RequestInit = {}) =>
  fetch(`${p.url}${route}`, { method: 'POST', ...init });

async function create(through: RoleProcess, body: Record<string, unknown>) {
  const res = await cluster.api(through, 'POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

describe('trigger registry across processes', () => {
  it('activating through one process serves on the other within a second, and deactivating stops it', async () => {
    const wf = await create(a, { name: 'sync', trigger: { path: 'sync' } });
    expect((await call(b, '/webhook/sync')).status).toBe(404);

    expect((await cluster.api(a, 'POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    // The process that made the change serves at once (local delivery is awaited).
    expect((await call(a, '/webhook/sync')).status).toBe(200);
    const on = await within(1_000, async () => (await call(b, '/webhook/sync')).status === 200);
    expect(on.ms).toBeLessThan(1_000);

    // The other way round: deactivate through b, a stops serving.
    expect((await cluster.api(b, 'POST', `/api/v1/workflows/${wf.id}/deactivate`)).status).toBe(200);
    expect((await call(b, '/webhook/sync')).status).toBe(404);
    const off = await within(1_000, async () => (await call(a, '/webhook/sync')).status === 404);
    expect(off.ms).toBeLessThan(1_000);
  });

  it('publishing a saved draft through one process moves its URL on the other (saving alone does not)', async () => {
    const wf = await create(b, { name: 'moving', trigger: { path: 'before-move' } });
    expect((await cluster.api(b, 'POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    await within(1_000, async () => (await call(a, '/webhook/before-move')).status === 200);

    const patched = await cluster.api(b, 'PATCH', `/api/v1/workflows/${wf.id}`, {
      trigger: { path: 'after-move' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.publishedVersion).toBe(1);
    // SPEC 1: a save is a draft; production on both processes keeps the published trigger.
    for (const p of [a, b]) {
      expect((await call(p, '/webhook/before-move')).status).toBe(200);
      expect((await call(p, '/webhook/after-move')).status).toBe(404);
    }

    const published = await cluster.api(b, 'POST', `/api/v1/workflows/${wf.id}/publish`);
    expect(published.status).toBe(200);
    expect(published.body.publishedVersion).toBe(2);
    await within(1_000, async () => (await call(a, '/webhook/after-move')).status === 200);
    expect((await call(a, '/webhook/before-move')).status).toBe(404);
  });

  it('after losing the bus connection every process reloads the registry from the store', async () => {
    // Imported by the CLI: written to the store without any notice, so only a resync can find it.
    const file = path.join(tempDir(), 'wf.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'imported', active: true, trigger: { path: 'imported' } }));
    const imported = await runCli(['workflows', 'import', file], {
      ...cluster.env,
      HOOKFLOW_DATA_DIR: tempDir(),
    });
    expect(imported.code, imported.stderr).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect((await call(a, '/webhook/imported')).status).toBe(404);

    const cut = await cluster.sql.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where application_name = 'hookflow-bus' and datname = current_database()`,
    );
    expect(cut.rowCount).toBe(4);

    for (const p of [a, b])
      await within(5_000, async () => (await call(p, '/webhook/imported')).status === 200);
    await within(5_000, async () => {
      const { rows } = await cluster.sql.query(
        `select count(*)::int as n from pg_stat_activity
          where application_name = 'hookflow-bus' and datname = current_database()`,
      );
      return rows[0].n === 4;
    });
    // And notices flow again over the new connections.
    const wf = await create(a, { name: 'after-reconnect', trigger: { path: 'after-reconnect' } });
    expect((await cluster.api(a, 'POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    await within(1_000, async () => (await call(b, '/webhook/after-reconnect')).status === 200);
  });
});

describe('test listening across processes', () => {
  it('a listener opened through one process captures a request sent to the other; its long-poll and SSE see it', async () => {
    const wf = await create(a, { name: 'listen', trigger: { path: 'listen-here', methods: ['POST'] } });
    const opened = await cluster.api(a, 'POST', `/api/v1/workflows/${wf.id}/test-listener`, {
      timeoutSeconds: 60,
    });
    expect(opened.status).toBe(201);

    // A's watchers, both waiting before the request is sent.
    const longPoll = cluster.api(a, 'GET', `/api/v1/workflows/${wf.id}/test-events?waitSeconds=10`);
    const sse = await openSse(a, `/api/v1/workflows/${wf.id}/test-events/stream`);
    expect((await sse.next()).event).toBe('listening');

    // B learns of the listener through the bus; until then its test URL says nobody listens.
    const { value: res } = await within(1_000, async () => {
      const r = await call(b, '/webhook-test/listen-here', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'param1=a&param2=b',
      });
      return r.status === 404 ? false : r;
    });
    expect(res.status).toBe(200);
    const executionId = res.headers.get('x-hookflow-execution-id');

    const polled = await longPoll;
    expect(polled.status).toBe(200);
    expect(polled.body.items).toHaveLength(1);
    expect(polled.body.items[0]).toMatchObject({
      executionId,
      item: { method: 'POST', body: { param1: 'a', param2: 'b' }, executionMode: 'test' },
    });

    const captured = await sse.next();
    expect(captured.event).toBe('capture');
    expect(captured.data).toMatchObject({ id: polled.body.items[0].id, item: { body: { param1: 'a' } } });
    sse.close();

    // The one-shot listener was consumed on b; a stops serving the test URL as well.
    await within(1_000, async () => (await call(a, '/webhook-test/listen-here')).status === 404);
    const schema = await cluster.api(a, 'GET', `/api/v1/workflows/${wf.id}/schema`);
    expect(schema.body.fields.map((f: { path: string }) => f.path)).toEqual(
      expect.arrayContaining(['body.param1', 'body.param2']),
    );
  });
});

describe('synchronous responses from a webhook-only process', () => {
  it('lastStep and respondStep answer with the result a worker process produced', async () => {
    const last = await create(a, {
      name: 'last',
      trigger: { path: 'sync-last', response: { mode: 'lastStep' } },
      steps: [{ name: 'greet', type: 'set', fields: { greeting: 'Hello {{ body.who }}' } }],
    });
    const respond = await create(a, {
      name: 'respond',
      trigger: { path: 'sync-respond', response: { mode: 'respondStep' } },
      steps: [
        {
          name: 'answer',
          type: 'respond',
          status: 201,
          headers: { 'x-who': '{{ body.who }}' },
          body: { ok: true },
        },
        { name: 'after', type: 'set', fields: { done: true } },
      ],
    });
    for (const wf of [last, respond])
      expect((await cluster.api(a, 'POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    await within(1_000, async () => (await call(b, '/webhook/sync-respond')).status !== 404);

    for (const p of [a, b]) {
      const json = { 'content-type': 'application/json' };
      const r1 = await call(p, '/webhook/sync-last', { headers: json, body: JSON.stringify({ who: 'ada' }) });
      expect(r1.status).toBe(200);
      expect(await r1.json()).toEqual({ greeting: 'Hello ada' });

      const r2 = await call(p, '/webhook/sync-respond', {
        headers: json,
        body: JSON.stringify({ who: 'bob' }),
      });
      expect(r2.status).toBe(201);
      expect(r2.headers.get('x-who')).toBe('bob');
      expect(await r2.json()).toEqual({ ok: true });
    }
  });
});

describe('rate limits across processes', () => {
  it('one limit for the trigger, whichever webhook process each request lands on', async () => {
    const wf = await create(a, {
      name: 'limited',
      trigger: { path: 'limited', options: { rateLimit: { requests: 3, perSeconds: 60 } } },
    });
    expect((await cluster.api(a, 'POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    // b serves it too (a preflight is answered before any limit is counted).
    await within(1_000, async () => {
      const res = await fetch(`${b.url}/webhook/limited`, { method: 'OPTIONS' });
      return res.status !== 404;
    });

    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(i % 2 === 0 ? a : b, '/webhook/limited')).status);
    // Each process counting its own share would have let all six through (3 each).
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });
});

describe('execution', () => {
  it('runs every request accepted by either webhook process exactly once', async () => {
    const N = 200;
    const wf = await create(a, {
      name: 'count',
      trigger: { path: 'count' },
      steps: [
        {
          name: 'notify',
          type: 'http',
          method: 'POST',
          url: `${downstream.url}/echo`,
          headers: { 'x-execution': '{{ $execution.id }}', 'x-attempt': '{{ $string($execution.attempt) }}' },
          body: { n: '{{ body.n }}' },
        },
      ],
    });
    expect((await cluster.api(a, 'POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    await within(
      1_000,
      async () => (await call(b, '/webhook/count', { headers: form, body: 'n=-1' })).status === 200,
    );
    await within(10_000, async () => downstream.received.some((r) => (r.body as { n?: string }).n === '-1'));
    const before = downstream.received.length;

    // 20 clients, alternating between the two webhook processes.
    const accepted: string[] = [];
    let next = 0;
    const client = async () => {
      for (let i = next++; i < N; i = next++) {
        const res = await call(i % 2 === 0 ? a : b, '/webhook/count', { headers: form, body: `n=${i}` });
        expect(res.status).toBe(200);
        accepted.push(((await res.json()) as { executionId: string }).executionId);
      }
    };
    await Promise.all(Array.from({ length: 20 }, client));
    expect(new Set(accepted).size).toBe(N);

    const { rows } = await within(
      30_000,
      async () => {
        const r = await cluster.sql.query(
          `select id, status, attempt from executions where workflow_id = $1 and id = any($2)`,
          [wf.id, accepted],
        );
        return r.rows.every((row) => row.status !== 'queued' && row.status !== 'running') && r;
      },
      200,
    ).then((x) => x.value);
    expect(rows).toHaveLength(N);
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
    expect(rows.filter((r) => r.attempt !== 1)).toEqual([]);

    // The downstream saw each execution once: no request ran twice, none was lost.
    const calls = downstream.received.slice(before).map((r) => r.headers['x-execution'] as string);
    expect(calls).toHaveLength(N);
    expect(new Set(calls)).toEqual(new Set(accepted));
  });
});

interface SseEvent {
  event: string;
  data: unknown;
}

/** Read a Server-Sent Events stream event by event. */
async function openSse(p: RoleProcess, route: string) {
  const abort = new AbortController();
  const res = await fetch(`${p.url}${route}`, {
    headers: { authorization: `Bearer ${cluster.token}` },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next(timeoutMs = 5_000): Promise<SseEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event) return { event, data: data ? JSON.parse(data) : undefined };
          continue;
        }
        const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
        const chunk = await reader.read().finally(() => clearTimeout(timer));
        if (chunk.done) throw new Error('SSE stream ended');
        buffer += chunk.value;
      }
    },
    close: () => abort.abort(),
  };
}
