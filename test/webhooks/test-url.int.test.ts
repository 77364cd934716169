/**
 * The test URL and test listening over real HTTP (SPEC 3 "Test URL", SPEC 8 test-listener, test-events,
 * stream and schema): when it serves, what a capture stores, how it is pushed live, and what is learned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, getExecution, storedCounts } from './webhook-http.js';

let server: TestServer;
let pathSeq = 0;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

/** A fresh (inactive) workflow on a path no other test uses. */
async function workflowOn(trigger: Record<string, unknown> = {}): Promise<{ id: string; path: string }> {
  const path = `t${++pathSeq}/hook`;
  const wf = await createWorkflow(server, { name: `test-url ${path}`, trigger: { path, ...trigger } });
  return { id: wf.id, path };
}

async function listen(workflowId: string, body: Record<string, unknown> = {}) {
  const res = await server.api('POST', `/api/v1/workflows/${workflowId}/test-listener`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { listenerId: string; expiresAt: string; testUrl: string };
}

function form(path: string, body: string, prefix = 'webhook-test'): Promise<Response> {
  return fetch(`${server.url}/${prefix}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

async function events(workflowId: string, query = '') {
  const res = await server.api('GET', `/api/v1/workflows/${workflowId}/test-events${query}`);
  expect(res.status).toBe(200);
  return res.body as {
    items: { id: string; receivedAt: string; item: { body: Record<string, unknown> } }[];
    nextCursor: string | null;
  };
}

describe('before listening', () => {
  it('answers 404 test_webhook_not_listening with a hint to start listening, storing nothing', async () => {
    const wf = await workflowOn();
    const before = await storedCounts(server);
    const body = await expectError(await form(wf.path, 'a=1'), 404, 'test_webhook_not_listening');
    expect(body.hint).toMatch(/[Ll]isten/);
    expect(body.hint).toContain('test-listener');
    await expectError(await form('no/such/test/path', 'a=1'), 404, 'test_webhook_not_listening');
    expect(await storedCounts(server)).toEqual(before);
  });
});

describe('listening', () => {
  it('opens with 201 {listenerId, expiresAt, testUrl}', async () => {
    const wf = await workflowOn();
    const before = Date.now();
    const listener = await listen(wf.id, { timeoutSeconds: 90 });
    expect(typeof listener.listenerId).toBe('string');
    expect(listener.testUrl).toBe(`${server.config.http.baseUrl}/webhook-test/${wf.path}`);
    const expires = Date.parse(listener.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 89_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 91_000);
    const state = await server.api('GET', `/api/v1/workflows/${wf.id}/test-listener`);
    expect(state.body).toMatchObject({ listening: true, listener: { listenerId: listener.listenerId } });
  });

  it('refuses an unknown workflow (404 not_found) and an out-of-range timeout (400 validation_failed)', async () => {
    const unknown = await server.api('POST', '/api/v1/workflows/no-such-workflow/test-listener', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    const wf = await workflowOn();
    for (const timeoutSeconds of [0, 601]) {
      const res = await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, { timeoutSeconds });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    await expectError(await form(wf.path, 'a=1'), 404, 'test_webhook_not_listening');
  });

  it('captures one request: 200, a test event, a test-mode execution; then closes', async () => {
    const wf = await workflowOn();
    await listen(wf.id);
    const res = await form(wf.path, 'param1=a&param2=b');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { message: string; executionId: string };
    expect(body.message).toBe('Workflow was started');
    expect(res.headers.get('x-hookflow-execution-id')).toBe(body.executionId);

    const execution = await getExecution(server, body.executionId);
    expect(execution).toMatchObject({ workflowId: wf.id, mode: 'test' });
    expect(execution.trigger).toMatchObject({
      executionMode: 'test',
      body: { param1: 'a', param2: 'b' },
      webhookUrl: `${server.config.http.baseUrl}/webhook-test/${wf.path}`,
    });

    const { items } = await events(wf.id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      executionId: body.executionId,
      receivedAt: execution.trigger.receivedAt,
    });
    expect(items[0]!.item).toEqual(execution.trigger);

    // One-shot by default: the second call finds nothing listening and stores nothing.
    const before = await storedCounts(server);
    await expectError(await form(wf.path, 'param1=again'), 404, 'test_webhook_not_listening');
    expect(await storedCounts(server)).toEqual(before);
    const state = await server.api('GET', `/api/v1/workflows/${wf.id}/test-listener`);
    expect(state.body).toEqual({ listening: false, listener: null });
  });

  it('with keepListening stays open and lists events newest first', async () => {
    const wf = await workflowOn();
    await listen(wf.id, { keepListening: true });
    for (const n of ['1', '2', '3']) expect((await form(wf.path, `n=${n}`)).status).toBe(200);
    const { items } = await events(wf.id);
    expect(items.map((e) => e.item.body.n)).toEqual(['3', '2', '1']);
    const times = items.map((e) => Date.parse(e.receivedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const page = await events(wf.id, '?limit=2');
    expect(page.items.map((e) => e.item.body.n)).toEqual(['3', '2']);
    expect(page.nextCursor).toBeTruthy();
    const rest = await events(wf.id, `?limit=2&cursor=${encodeURIComponent(page.nextCursor!)}`);
    expect(rest.items.map((e) => e.item.body.n)).toEqual(['1']);
  });

  it('is closed by DELETE test-listener', async () => {
    const wf = await workflowOn();
    await listen(wf.id, { keepListening: true });
    expect((await form(wf.path, 'a=1')).status).toBe(200);
    const del = await server.api('DELETE', `/api/v1/workflows/${wf.id}/test-listener`);
    expect(del.status).toBe(204);
    await expectError(await form(wf.path, 'a=2'), 404, 'test_webhook_not_listening');
  });

  it('closes at its deadline, and an expired listener holds nothing', async () => {
    const wf = await workflowOn();
    const idleHint = (await expectError(await form(wf.path, 'a=0', 'webhook'), 404, 'webhook_not_registered'))
      .hint;
    await listen(wf.id, { timeoutSeconds: 1, keepListening: true });
    expect((await form(wf.path, 'a=1')).status).toBe(200);
    const listeningHint = (
      await expectError(await form(wf.path, 'a=1', 'webhook'), 404, 'webhook_not_registered')
    ).hint;
    expect(listeningHint).not.toBe(idleHint);
    await new Promise((r) => setTimeout(r, 1100));
    await expectError(await form(wf.path, 'a=2'), 404, 'test_webhook_not_listening');
    // The production 404 no longer claims the test URL is listening.
    const after = await expectError(await form(wf.path, 'a=3', 'webhook'), 404, 'webhook_not_registered');
    expect(after.hint).toBe(idleHint);
    // Another workflow on the same method+path may now listen, and captures for itself.
    const other = await createWorkflow(server, { name: 'successor', trigger: { path: wf.path } });
    await listen(other.id);
    const res = await form(wf.path, 'a=4');
    expect(res.status).toBe(200);
    expect((await getExecution(server, res.headers.get('x-hookflow-execution-id')!)).workflowId).toBe(
      other.id,
    );
  });

  it('applies the same method, limit and body checks as production, without consuming the listener', async () => {
    const wf = await workflowOn({ options: { maxBodyBytes: 50 } });
    await listen(wf.id);
    const before = await storedCounts(server);
    const wrongMethod = await fetch(`${server.url}/webhook-test/${wf.path}`, { method: 'PUT', body: 'a=1' });
    await expectError(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    await expectError(await form(wf.path, `a=${'x'.repeat(60)}`), 413, 'payload_too_large');
    const broken = await fetch(`${server.url}/webhook-test/${wf.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    await expectError(broken, 400, 'invalid_body');
    expect(await storedCounts(server)).toEqual(before);
    // Still listening: the one-shot listener is consumed only by an accepted request.
    expect((await form(wf.path, 'a=1')).status).toBe(200);
  });

  it('answers a test call like production would (response override)', async () => {
    const wf = await workflowOn({ response: { mode: 'immediately', status: 202, body: { queued: 'yes' } } });
    await listen(wf.id);
    const res = await form(wf.path, 'a=1');
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ queued: 'yes' });
    expect(res.headers.get('x-hookflow-execution-id')).toBeTruthy();
  });

  it('refuses a second workflow listening on the same method+path with 409 path_conflict', async () => {
    const path = `shared${++pathSeq}/:id`;
    const a = await createWorkflow(server, { name: 'a', trigger: { path } });
    const b = await createWorkflow(server, { name: 'b', trigger: { path: path.replace(':id', ':other') } });
    const c = await createWorkflow(server, { name: 'c', trigger: { path, methods: ['PUT'] } });
    await listen(a.id);
    const conflict = await server.api('POST', `/api/v1/workflows/${b.id}/test-listener`, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('path_conflict');
    expect(conflict.body.hint).toBeTruthy();
    // Another method on the same path is no conflict.
    await listen(c.id);
    // Once a's listener is closed, b may listen.
    expect((await server.api('DELETE', `/api/v1/workflows/${a.id}/test-listener`)).status).toBe(204);
    await listen(b.id);
  });

  it('serves the test URL of an active workflow while production keeps serving too', async () => {
    const path = `live${++pathSeq}`;
    const wf = await createActiveWorkflow(server, { name: 'live', trigger: { path } });
    await listen(wf.id);
    const test = await form(path, 'via=test');
    expect(test.status).toBe(200);
    const prod = await form(path, 'via=production', 'webhook');
    expect(prod.status).toBe(200);
    const testRun = await getExecution(server, test.headers.get('x-hookflow-execution-id')!);
    const prodRun = await getExecution(server, prod.headers.get('x-hookflow-execution-id')!);
    expect(testRun).toMatchObject({
      mode: 'test',
      trigger: { executionMode: 'test', body: { via: 'test' } },
    });
    expect(prodRun).toMatchObject({
      mode: 'production',
      trigger: { executionMode: 'production', body: { via: 'production' } },
    });
    // Production calls are not test events.
    expect((await events(wf.id)).items.map((e) => e.item.body.via)).toEqual(['test']);
  });
});

describe('watching captures', () => {
  it('long-polls GET test-events?waitSeconds until a capture arrives', async () => {
    const wf = await workflowOn();
    await listen(wf.id);
    const started = Date.now();
    const poll = events(wf.id, '?waitSeconds=5');
    await new Promise((r) => setTimeout(r, 300));
    expect((await form(wf.path, 'param1=mid-wait')).status).toBe(200);
    const { items } = await poll;
    const elapsed = Date.now() - started;
    expect(items[0]?.item.body).toEqual({ param1: 'mid-wait' });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(4000);
  });

  it('long-polls until waitSeconds when nothing arrives', async () => {
    const wf = await workflowOn();
    const started = Date.now();
    const { items } = await events(wf.id, '?waitSeconds=1');
    expect(items).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('pushes a capture event over Server-Sent Events', async () => {
    const wf = await workflowOn();
    await listen(wf.id);
    const abort = new AbortController();
    const res = await fetch(`${server.url}/api/v1/workflows/${wf.id}/test-events/stream`, {
      headers: { authorization: `Bearer ${server.token}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    /** Reads until an event named `name` arrives; returns its parsed data and id. */
    async function next(name: string): Promise<{ data: unknown; id: string | undefined }> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          if (fields.get('event') === name)
            return { data: JSON.parse(fields.get('data') ?? 'null'), id: fields.get('id') };
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before a "${name}" event`);
        buffer += value;
      }
    }
    try {
      const listening = await next('listening');
      expect(listening.data).toMatchObject({ listening: true });
      expect((await form(wf.path, 'param1=live')).status).toBe(200);
      const capture = await next('capture');
      expect(capture.data).toMatchObject({
        item: { body: { param1: 'live' }, executionMode: 'test', method: 'POST' },
      });
      const [event] = (await events(wf.id)).items;
      expect(capture.id).toBe(event!.id);
    } finally {
      abort.abort();
      await reader.cancel().catch(() => undefined);
    }
  });

  it('refuses the stream without the API token', async () => {
    const wf = await workflowOn();
    const res = await fetch(`${server.url}/api/v1/workflows/${wf.id}/test-events/stream`);
    await expectError(res, 401, 'unauthorized');
  });
});

describe('learned schema', () => {
  it('merges the fields of two captures and marks a field missing in one of them optional', async () => {
    const wf = await workflowOn();
    await listen(wf.id, { keepListening: true });
    expect((await form(wf.path, 'param1=x&param2=y&n[a]=1')).status).toBe(200);
    expect((await form(wf.path, 'param1=z&n[a]=2')).status).toBe(200);

    const res = await server.api('GET', `/api/v1/workflows/${wf.id}/schema`);
    expect(res.status).toBe(200);
    const { fields, jsonSchema, samples } = res.body as {
      fields: { path: string; type: string; example: unknown; optional: boolean }[];
      jsonSchema: { properties: { body: { properties: Record<string, unknown>; required?: string[] } } };
      samples: number;
    };
    expect(samples).toBe(2);
    const field = (path: string) => fields.find((f) => f.path === path);
    expect(field('body.param1')).toMatchObject({ type: 'string', example: 'z', optional: false });
    expect(field('body.param2')).toMatchObject({ type: 'string', example: 'y', optional: true });
    expect(field('body.n.a')).toMatchObject({ type: 'string', example: '2', optional: false });
    expect(Object.keys(jsonSchema.properties.body.properties).sort()).toEqual(['n', 'param1', 'param2']);
    expect(jsonSchema.properties.body.required ?? []).not.toContain('param2');
  });

  it('is empty before any capture', async () => {
    const wf = await workflowOn();
    const res = await server.api('GET', `/api/v1/workflows/${wf.id}/schema`);
    expect(res.status).toBe(200);
    expect(res.body.fields).toEqual([]);
  });
});
