/**
 * SPEC 3 and 5 over real HTTP: every status a production webhook URL answers, the response body and
 * headers of an accepted call, and that no rejected call stores anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import {
  chunked,
  expectError,
  getExecution,
  itemOf,
  MULTIPART,
  multipart,
  storedCounts,
} from './webhook-http.js';

// Small enough to exceed cheaply, large enough for the API's own bodies (config minimum is 1024).
const GLOBAL_LIMIT = 4096;
const TRIGGER_LIMIT = 100;

let server: TestServer;
const ids: Record<string, string> = {};

/** fetch a webhook URL; every response, whatever its status, must carry X-Request-Id. */
async function hit(path: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Response> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', ...init });
  expect(res.headers.get('x-request-id'), `X-Request-Id on ${init.method ?? 'POST'} ${path}`).toMatch(/\S/);
  return res;
}

/** Runs `fn` and asserts the store holds exactly what it held before. */
async function expectNothingStored(fn: () => Promise<void>): Promise<void> {
  const before = await storedCounts(server);
  await fn();
  expect(await storedCounts(server)).toEqual(before);
}

beforeAll(async () => {
  server = await startTestServer({ env: { HOOKFLOW_MAX_BODY_BYTES: String(GLOBAL_LIMIT) } });
  ids.param = (await createActiveWorkflow(server, { name: 'param', trigger: { path: 'orders/:id' } })).id;
  ids.static = (await createActiveWorkflow(server, { name: 'static', trigger: { path: 'orders/new' } })).id;
  ids.get = (
    await createActiveWorkflow(server, { name: 'get', trigger: { path: 'ping', methods: ['GET'] } })
  ).id;
  ids.small = (
    await createActiveWorkflow(server, {
      name: 'small',
      trigger: { path: 'small', options: { maxBodyBytes: TRIGGER_LIMIT } },
    })
  ).id;
  ids.capped = (
    await createActiveWorkflow(server, {
      name: 'capped',
      trigger: { path: 'capped', options: { maxBodyBytes: 1_000_000 } },
    })
  ).id;
  ids.custom = (
    await createActiveWorkflow(server, {
      name: 'custom',
      trigger: { path: 'custom', response: { mode: 'immediately', status: 202, body: { received: true } } },
    })
  ).id;
  ids.quiet = (
    await createActiveWorkflow(server, {
      name: 'quiet',
      trigger: { path: 'quiet', response: { mode: 'immediately', noContent: true } },
    })
  ).id;
  ids.inactive = (await createWorkflow(server, { name: 'inactive', trigger: { path: 'sleepy' } })).id;
  ids.listening = (await createWorkflow(server, { name: 'listening', trigger: { path: 'setting-up' } })).id;
  const listener = await server.api('POST', `/api/v1/workflows/${ids.listening}/test-listener`, {
    timeoutSeconds: 60,
  });
  expect(listener.status).toBe(201);
});

afterAll(async () => {
  await server?.close();
});

describe('404 webhook_not_registered', () => {
  it('answers an unknown path with the code and a hint to activate or use the test URL', async () => {
    await expectNothingStored(async () => {
      const body = await expectError(
        await hit('/webhook/no/such/path', { body: 'a=1' }),
        404,
        'webhook_not_registered',
      );
      expect(body.hint).toMatch(/[Aa]ctivate/);
      expect(body.hint).toContain('/webhook-test/');
    });
  });

  it("answers an inactive workflow's path exactly like an unknown one", async () => {
    await expectNothingStored(async () => {
      const unknown = await expectError(await hit('/webhook/nothing-here'), 404, 'webhook_not_registered');
      const inactive = await expectError(await hit('/webhook/sleepy'), 404, 'webhook_not_registered');
      expect(inactive.hint).toBe(unknown.hint);
    });
  });

  it('says so when the path is not active but its test URL is listening', async () => {
    await expectNothingStored(async () => {
      const idle = await expectError(await hit('/webhook/sleepy'), 404, 'webhook_not_registered');
      const listening = await expectError(await hit('/webhook/setting-up'), 404, 'webhook_not_registered');
      expect(listening.hint).not.toBe(idle.hint);
      expect(listening.hint).toMatch(/test URL is listening/);
    });
  });
});

describe('405 method_not_allowed', () => {
  it('names the methods the path serves in Allow', async () => {
    await expectNothingStored(async () => {
      const res = await hit('/webhook/orders/42', { method: 'PUT', body: '{}' });
      await expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('POST');
    });
  });

  it('lists HEAD beside GET, and refuses POST on a GET trigger', async () => {
    await expectNothingStored(async () => {
      const res = await hit('/webhook/ping', { method: 'POST', body: 'a=1' });
      await expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    });
  });

  it('refuses HEAD when the trigger does not serve GET', async () => {
    await expectNothingStored(async () => {
      const res = await hit('/webhook/orders/42', { method: 'HEAD' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.text()).toBe('');
    });
  });
});

describe('HEAD on a GET trigger', () => {
  it('is answered like GET, without a body', async () => {
    const get = await hit('/webhook/ping?x=1', { method: 'GET' });
    expect(get.status).toBe(200);
    expect(await get.json()).toMatchObject({ message: 'Workflow was started' });

    const head = await hit('/webhook/ping?x=2', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    const item = await itemOf(server, head);
    expect(item).toMatchObject({ method: 'HEAD', query: { x: '2' }, body: {} });
  });
});

describe('413 payload_too_large', () => {
  const big = Buffer.alloc(GLOBAL_LIMIT + 1, 'a');
  const overTrigger = Buffer.alloc(TRIGGER_LIMIT + 1, 'a');

  it.each([
    ['global limit, declared Content-Length', '/webhook/orders/1', big, false],
    ['global limit, chunked without Content-Length', '/webhook/orders/1', big, true],
    ['trigger limit, declared Content-Length', '/webhook/small', overTrigger, false],
    ['trigger limit, chunked without Content-Length', '/webhook/small', overTrigger, true],
    // options.maxBodyBytes never raises the global limit.
    ['trigger limit above the global one, declared', '/webhook/capped', big, false],
    ['trigger limit above the global one, chunked', '/webhook/capped', big, true],
  ])('%s', async (_name, path, data, isChunked) => {
    await expectNothingStored(async () => {
      const init = isChunked ? chunked(data, 512) : { body: data };
      const res = await hit(path, { headers: { 'content-type': 'text/plain' }, ...init });
      await expectError(res, 413, 'payload_too_large');
    });
  });

  it('accepts a body of exactly the limit', async () => {
    const res = await hit('/webhook/small', {
      headers: { 'content-type': 'text/plain' },
      body: 'b'.repeat(TRIGGER_LIMIT),
    });
    expect(res.status).toBe(200);
    expect((await itemOf(server, res)).body).toBe('b'.repeat(TRIGGER_LIMIT));
  });
});

describe('400 invalid_body', () => {
  const truncated = multipart([
    { name: 'note', value: 'hello' },
    { name: 'upload', filename: 'a.bin', type: 'application/octet-stream', data: Buffer.alloc(64, 1) },
  ]);
  it.each([
    ['broken JSON', 'application/json', '{"a": 1,'],
    ['broken +json', 'application/vnd.api+json', '{"data": [}'],
    ['broken XML', 'application/xml', '<order><id>1</id>'],
    ['broken text/xml', 'text/xml', '<a><b></a></b>'],
    ['multipart cut off inside a file', MULTIPART, truncated.subarray(0, truncated.length - 40)],
    [
      'multipart without its closing boundary',
      MULTIPART,
      multipart([{ name: 'a', value: '1' }]).subarray(0, -6),
    ],
    ['multipart without a boundary parameter', 'multipart/form-data', 'a=1'],
  ])('%s', async (_name, contentType, body) => {
    await expectNothingStored(async () => {
      const res = await hit('/webhook/orders/7', { headers: { 'content-type': contentType }, body });
      const error = await expectError(res, 400, 'invalid_body');
      expect(error.hint).toBeTruthy();
    });
  });
});

describe('200 Workflow was started', () => {
  it('answers with the execution id in the body and in X-Hookflow-Execution-Id', async () => {
    const res = await hit('/webhook/orders/42', {
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as { message: string; executionId: string };
    expect(Object.keys(body).sort()).toEqual(['executionId', 'message']);
    expect(body.message).toBe('Workflow was started');
    expect(res.headers.get('x-hookflow-execution-id')).toBe(body.executionId);
    const execution = await getExecution(server, body.executionId);
    expect(execution).toMatchObject({ workflowId: ids.param, mode: 'production' });
  });

  it('keeps a caller-supplied X-Request-Id so logs can be correlated', async () => {
    const res = await hit('/webhook/orders/42', { headers: { 'x-request-id': 'caller-abc.123' }, body: '' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('caller-abc.123');
  });

  it('gives every request its own request id', async () => {
    const [a, b] = await Promise.all([hit('/webhook/orders/1'), hit('/webhook/nope')]);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('uses the overridden status and body', async () => {
    const res = await hit('/webhook/custom', {
      body: 'x=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ received: true });
    const execution = await getExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.workflowId).toBe(ids.custom);
  });

  it('answers 204 with no body when noContent is set, still naming the execution', async () => {
    const res = await hit('/webhook/quiet', {
      body: 'x=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    const execution = await getExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.workflowId).toBe(ids.quiet);
  });
});

describe('routing', () => {
  it('lets a static segment beat a parameter segment', async () => {
    const res = await hit('/webhook/orders/new', { body: '' });
    expect(res.status).toBe(200);
    const execution = await getExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.workflowId).toBe(ids.static);
    expect(execution.trigger.params).toEqual({});
  });

  it('puts parameter values (percent-decoded) in the item params', async () => {
    const res = await hit('/webhook/orders/a%20b', { body: '' });
    expect(res.status).toBe(200);
    const execution = await getExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.workflowId).toBe(ids.param);
    expect(execution.trigger).toMatchObject({ path: 'orders/a%20b', params: { id: 'a b' } });
  });

  it('ignores leading and trailing slashes and matches case-sensitively', async () => {
    const ok = await hit('/webhook/orders/new/', { body: '' });
    expect(ok.status).toBe(200);
    expect((await getExecution(server, ok.headers.get('x-hookflow-execution-id')!)).workflowId).toBe(
      ids.static,
    );
    await expectNothingStored(async () => {
      await expectError(await hit('/webhook/ORDERS/new', { body: '' }), 404, 'webhook_not_registered');
    });
  });

  it('does not serve the production URL of a deactivated workflow', async () => {
    const wf = await createActiveWorkflow(server, { name: 'short-lived', trigger: { path: 'short-lived' } });
    expect((await hit('/webhook/short-lived')).status).toBe(200);
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`)).status).toBe(200);
    await expectNothingStored(async () => {
      await expectError(await hit('/webhook/short-lived'), 404, 'webhook_not_registered');
    });
  });
});
