/**
 * The data store (SPEC 7f) over HTTP, on SQLite and PostgreSQL: the `store` step's operations and
 * answers, scopes, 1 000 concurrent increments through webhooks adding up exactly, TTL expiry,
 * the size limits (a clear step error; 400 from the API), and the API itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_VALUE_MAX_BYTES } from '../../src/shared/data-store.js';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

/** Runs `tasks` with at most `width` at once. */
async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('data store on $dialect', ({ postgres }) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
  });

  afterAll(async () => {
    await server?.close();
  });

  /** An active workflow answering with its last step's output; returns a caller of its URL. */
  async function endpoint(path: string, steps: unknown[]) {
    const wf = await createActiveWorkflow(server, {
      name: path,
      trigger: { path, response: { mode: 'lastStep' } },
      steps,
    });
    const call = async (body: unknown = {}) => {
      const res = await fetch(`${server.url}/webhook/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        // biome-ignore lint/suspicious/noExplicitAny: JSON from the webhook
        body: (await res.json()) as any,
        id: res.headers.get('x-hookflow-execution-id'),
      };
    };
    return { wf, call };
  }

  it('each operation answers its shape; the workflow scope is the workflow’s own', async () => {
    const op = (name: string, fields: Record<string, unknown>) => ({
      name,
      type: 'store',
      key: '{{ $trigger.body.key }}',
      ...fields,
    });
    const { wf, call } = await endpoint('ops', [
      op('first', { op: 'setIfAbsent', value: '{{ $trigger.body.v }}' }),
      op('again', { op: 'setIfAbsent', value: 'other' }),
      op('read', { op: 'get' }),
      op('write', { op: 'set', value: { n: '{{ $trigger.body.v }}' } }),
      op('count', { op: 'increment', key: '{{ $trigger.body.key & ":n" }}', by: 5 }),
      op('gone', { op: 'delete' }),
      op('none', { op: 'get' }),
      {
        name: 'all',
        type: 'set',
        fields: {
          first: '{{ $steps.first }}',
          again: '{{ $steps.again }}',
          read: '{{ $steps.read }}',
          write: '{{ $steps.write }}',
          count: '{{ $steps.count }}',
          gone: '{{ $steps.gone }}',
          none: '{{ $steps.none }}',
        },
      },
    ]);
    const res = await call({ key: 'order:42', v: 'x' });
    expect(res.status, JSON.stringify((await finishedExecution(server, res.id!)).error)).toBe(200);
    expect(res.body).toEqual({
      first: { set: true, value: 'x' },
      again: { set: false, value: 'x' },
      read: { found: true, value: 'x' },
      write: { value: { n: 'x' } },
      count: { value: 5 },
      gone: { deleted: true },
      none: { found: false, value: null },
    });
    // The counter lives in the workflow's scope, not the global one.
    const scoped = await server.api(
      'GET',
      `/api/v1/store/workflow/${encodeURIComponent('order:42:n')}?workflowId=${wf.id}`,
    );
    expect(scoped.status).toBe(200);
    expect(scoped.body).toMatchObject({ key: 'order:42:n', value: 5, expiresAt: null });
    expect((await server.api('GET', `/api/v1/store/global/${encodeURIComponent('order:42:n')}`)).status).toBe(
      404,
    );
  });

  it('1 000 concurrent increments through webhooks add up exactly', async () => {
    const { call } = await endpoint('hits', [
      { name: 'count', type: 'store', op: 'increment', key: 'hits', scope: 'global' },
    ]);
    const answers = await pool(1000, 50, () => call());
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    // Each execution saw a distinct value: none read-then-wrote over another.
    const values = new Set(answers.map((a) => a.body.value));
    expect(values.size).toBe(1000);
    expect((await server.api('GET', '/api/v1/store/global/hits')).body.value).toBe(1000);
  });

  it('an entry with a TTL is gone once it expires, for the step and the API', async () => {
    const { call } = await endpoint('ttl', [
      {
        name: 'seen',
        type: 'store',
        op: 'setIfAbsent',
        key: 'once',
        value: true,
        ttlSeconds: 1,
        scope: 'global',
      },
    ]);
    expect((await call()).body).toEqual({ set: true, value: true });
    expect((await call()).body).toEqual({ set: false, value: true });
    const entry = await server.api('GET', '/api/v1/store/global/once');
    expect(entry.status).toBe(200);
    expect(Date.parse(entry.body.expiresAt)).toBeGreaterThan(Date.now() - 1000);
    // Polled, not slept: the entry answers 404 from its expiry on.
    await eventually(async () => (await server.api('GET', '/api/v1/store/global/once')).status === 404, 5000);
    expect((await call()).body).toEqual({ set: true, value: true });
  });

  it('size limits: a clear step error, and 400 from the API', async () => {
    const { call } = await endpoint('limits', [
      {
        name: 'save',
        type: 'store',
        op: 'set',
        key: '{{ body.key }}',
        value: '{{ body.value }}',
        scope: 'global',
      },
    ]);
    const big = 'x'.repeat(DATA_VALUE_MAX_BYTES);
    const tooBig = await call({ key: 'big', value: big });
    expect(tooBig.status).toBe(500);
    const failed = await finishedExecution(server, tooBig.id!);
    expect(failed.error.message).toMatch(
      /The value is \d+ bytes as JSON; a value may be at most 262144 bytes/,
    );
    expect(failed.error.field).toBe('/value');
    const longKey = await call({ key: 'k'.repeat(513), value: 1 });
    const failedKey = await finishedExecution(server, longKey.id!);
    expect(failedKey.error.message).toBe('The key has 513 characters; a key may have at most 512.');
    // Just under both limits is fine (the value's quotes count).
    expect((await call({ key: 'k'.repeat(512), value: big.slice(2) })).status).toBe(200);

    const put = await server.api('PUT', `/api/v1/store/global/${'k'.repeat(513)}`, { value: 1 });
    expect(put.status).toBe(400);
    expect(put.body.code).toBe('validation_failed');
    const putBig = await server.api('PUT', '/api/v1/store/global/big', { value: big });
    expect(putBig.status).toBe(400);
    expect(putBig.body.message).toMatch(/262144 bytes/);
  });

  it('the API lists, pages, reads, writes and deletes entries', async () => {
    for (const key of ['cfg:a', 'cfg:b', 'cfg:c', 'other'])
      expect((await server.api('PUT', `/api/v1/store/global/${key}`, { value: { key } })).status).toBe(200);
    const first = await server.api('GET', '/api/v1/store?scope=global&prefix=cfg:&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.items.map((e: { key: string }) => e.key)).toEqual(['cfg:a', 'cfg:b']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await server.api(
      'GET',
      `/api/v1/store?scope=global&prefix=cfg:&limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(second.body).toEqual({
      items: [{ key: 'cfg:c', value: { key: 'cfg:c' }, expiresAt: null, updatedAt: expect.any(String) }],
      nextCursor: null,
    });
    expect((await server.api('GET', '/api/v1/store/global/cfg:b')).body.value).toEqual({ key: 'cfg:b' });
    expect((await server.api('DELETE', '/api/v1/store/global/cfg:b')).status).toBe(204);
    const missing = await server.api('GET', '/api/v1/store/global/cfg:b');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    expect((await server.api('DELETE', '/api/v1/store/global/cfg:b')).status).toBe(404);
    // The workflow scope needs its workflow.
    const noWorkflow = await server.api('GET', '/api/v1/store?scope=workflow');
    expect(noWorkflow.status).toBe(400);
    expect(noWorkflow.body.fields).toEqual([
      { field: '/workflowId', message: 'is required for the workflow scope' },
    ]);
    expect((await server.api('PUT', '/api/v1/store/workflow/x?workflowId=w1', { value: 1 })).status).toBe(
      200,
    );
    expect((await server.api('GET', '/api/v1/store?scope=workflow&workflowId=w1')).body.items).toHaveLength(
      1,
    );
    expect((await server.api('GET', '/api/v1/store?scope=workflow&workflowId=w2')).body.items).toHaveLength(
      0,
    );
  });

  it('deleting a workflow deletes its own entries, not the global ones', async () => {
    const { wf, call } = await endpoint('doomed', [
      { name: 'mine', type: 'store', op: 'set', key: 'k', value: 1 },
      { name: 'shared', type: 'store', op: 'set', key: 'doomed-shared', value: 2, scope: 'global' },
    ]);
    expect((await call()).status).toBe(200);
    expect((await server.api('GET', `/api/v1/store/workflow/k?workflowId=${wf.id}`)).status).toBe(200);
    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/v1/store/workflow/k?workflowId=${wf.id}`)).status).toBe(404);
    expect((await server.api('GET', '/api/v1/store/global/doomed-shared')).status).toBe(200);
  });

  it('refuses a store step whose fields do not fit its operation, on save', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'bad store',
      steps: [{ name: 's', type: 'store', op: 'get', key: 'k', value: 1, by: 2 }],
    });
    expect(res.status).toBe(400);
    expect(res.body.fields.map((f: { field: string }) => f.field)).toEqual(
      expect.arrayContaining(['/steps/0/value', '/steps/0/by']),
    );
  });
});
