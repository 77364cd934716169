/** Trigger options of SPEC 5b over real HTTP: ipAllowlist, CORS, rateLimit, idempotency, schemaCheck. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActiveWorkflow,
  createWorkflow,
  json,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

let server: TestServer;
let proxied: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  proxied = await startTestServer({ env: { HOOKFLOW_TRUST_PROXY: '127.0.0.1' } });
});
afterAll(async () => {
  await server.close();
  await proxied.close();
});

const post = (s: TestServer, path: string, body = 'a=1', headers: Record<string, string> = {}) =>
  fetch(`${s.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });

async function executions(s: TestServer, workflowId: string) {
  return s.hookflow.store.db
    .selectFrom('executions')
    .selectAll()
    .where('workflow_id', '=', workflowId)
    .execute();
}

describe('ipAllowlist', () => {
  it('admits listed ranges and refuses others with 403 ip_not_allowed, storing nothing', async () => {
    const open = await createActiveWorkflow(server, {
      trigger: { path: 'ip-open', options: { ipAllowlist: ['127.0.0.0/8', '::1/128'] } },
    });
    expect((await post(server, 'ip-open')).status).toBe(200);
    const closed = await createActiveWorkflow(server, {
      trigger: { path: 'ip-closed', options: { ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'] } },
    });
    const res = await post(server, 'ip-closed');
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('ip_not_allowed');
    expect(await executions(server, closed.id)).toHaveLength(0);
    expect(await executions(server, open.id)).toHaveLength(1);
    // Refused before its body was read, but by this trigger: the refusal is in its list.
    const rejections = await server.api('GET', `/api/v1/workflows/${closed.id}/rejections`);
    expect(rejections.body.items[0]).toMatchObject({ code: 'ip_not_allowed', method: 'POST' });
  });

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    const opts = { options: { ipAllowlist: ['203.0.113.0/24'] } };
    await createActiveWorkflow(server, { trigger: { path: 'xff', ...opts } });
    await createActiveWorkflow(proxied, { trigger: { path: 'xff', ...opts } });
    const forwarded = { 'x-forwarded-for': '203.0.113.7' };
    expect((await post(server, 'xff', 'a=1', forwarded)).status).toBe(403);
    expect((await post(proxied, 'xff', 'a=1', forwarded)).status).toBe(200);
    expect((await post(proxied, 'xff')).status).toBe(403);
  });

  it('refuses a malformed range when the workflow is saved', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'bad',
      trigger: { options: { ipAllowlist: ['10.0.0.0/40'] } },
    });
    expect(res.status).toBe(400);
    expect(res.body.fields[0].field).toBe('/trigger/options/ipAllowlist/0');
  });
});

describe('CORS', () => {
  it('answers a preflight with the matching origin and the trigger methods', async () => {
    await createActiveWorkflow(server, {
      trigger: {
        path: 'cors',
        methods: ['PUT', 'DELETE'],
        options: { allowedOrigins: ['https://a.example', 'https://b.example'] },
      },
    });
    const res = await fetch(`${server.url}/webhook/cors`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://b.example',
        'access-control-request-method': 'DELETE',
        'access-control-request-headers': 'x-custom',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://b.example');
    expect(res.headers.get('access-control-allow-methods')).toBe('PUT, DELETE, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe('x-custom');
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);

    const foreign = await fetch(`${server.url}/webhook/cors`, {
      method: 'PUT',
      headers: { origin: 'https://evil.example' },
      body: 'a=1',
    });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const simple = await fetch(`${server.url}/webhook/cors`, {
      method: 'PUT',
      headers: { origin: 'https://a.example' },
      body: 'a=1',
    });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://a.example');
  });

  it('allows any origin by default', async () => {
    await createActiveWorkflow(server, { trigger: { path: 'cors-any' } });
    const res = await fetch(`${server.url}/webhook/cors-any`, {
      method: 'POST',
      headers: { origin: 'https://x.example' },
      body: 'a=1',
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('rateLimit', () => {
  it('answers 429 rate_limited with Retry-After past the limit', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: { path: 'limited', options: { rateLimit: { requests: 3, perSeconds: 60 } } },
    });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(server, 'limited')).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const res = await post(server, 'limited');
    expect((await json(res)).code).toBe('rate_limited');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await executions(server, wf.id)).toHaveLength(3);

    const rejections = await server.api('GET', `/api/v1/workflows/${wf.id}/rejections`);
    expect(rejections.body.items[0]).toMatchObject({
      code: 'rate_limited',
      method: 'POST',
      mode: 'production',
    });
  });
});

describe('idempotency', () => {
  it('runs a repeated Idempotency-Key once and answers the repeat like the first call', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: { path: 'idem', options: { idempotency: { header: 'Idempotency-Key' } } },
    });
    const first = await post(server, 'idem', 'a=1', { 'idempotency-key': 'k-1' });
    const firstBody = await json(first);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(server, 'idem', 'a=2', { 'idempotency-key': 'k-1' });
    expect(again.status).toBe(first.status);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-hookflow-execution-id')).toBe(firstBody.executionId);
    expect(await json(again)).toEqual(firstBody);
    const other = await json(await post(server, 'idem', 'a=3', { 'idempotency-key': 'k-2' }));
    expect(other.executionId).not.toBe(firstBody.executionId);
    expect((await post(server, 'idem')).status).toBe(200); // no key: an ordinary request
    expect(await executions(server, wf.id)).toHaveLength(3);
  });

  it('runs concurrent duplicates once', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: { path: 'idem-race', options: { idempotency: { header: 'Idempotency-Key' } } },
    });
    const responses = await Promise.all(
      Array.from({ length: 25 }, () => post(server, 'idem-race', 'a=1', { 'idempotency-key': 'same' })),
    );
    const ids = new Set(await Promise.all(responses.map(async (r) => (await json(r)).executionId)));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(24);
    expect(await executions(server, wf.id)).toHaveLength(1);
  });

  it('takes the key from an expression over the item', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: {
        path: 'idem-expr',
        options: { idempotency: { key: '{{ headers.`x-github-delivery` }}', windowSeconds: 60 } },
      },
    });
    const a = await json(await post(server, 'idem-expr', 'a=1', { 'x-github-delivery': 'd-1' }));
    const b = await json(await post(server, 'idem-expr', 'a=1', { 'x-github-delivery': 'd-1' }));
    expect(b.executionId).toBe(a.executionId);
    expect(await executions(server, wf.id)).toHaveLength(1);
  });

  it('refuses an idempotency option without exactly one source', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'x',
      trigger: { options: { idempotency: { windowSeconds: 5 } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.fields[0].field).toBe('/trigger/options/idempotency');
  });
});

describe('schemaCheck', () => {
  async function learnedWorkflow(path: string, schemaCheck: 'warn' | 'reject') {
    const wf = await createWorkflow(server, { trigger: { path, options: { schemaCheck } } });
    await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {});
    const captured = await fetch(`${server.url}/webhook-test/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 10, currency: 'EUR' }),
    });
    expect(captured.status).toBe(200);
    await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    return wf;
  }
  const postJson = (path: string, body: unknown) =>
    fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('reject: answers 422 schema_mismatch naming the fields, and stores nothing', async () => {
    const wf = await learnedWorkflow('schema-reject', 'reject');
    expect((await postJson('schema-reject', { amount: 12, currency: 'USD' })).status).toBe(200);
    const res = await postJson('schema-reject', { amount: 'twelve', currency: 'USD' });
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.code).toBe('schema_mismatch');
    expect(body.message).toContain('body.amount');
    const production = (await executions(server, wf.id)).filter((e) => e.mode === 'production');
    expect(production).toHaveLength(1);
  });

  it('warn: accepts and marks the execution', async () => {
    await learnedWorkflow('schema-warn', 'warn');
    const res = await postJson('schema-warn', { amount: 1, currency: 'EUR', extra: true });
    expect(res.status).toBe(200);
    const execution = await server.api('GET', `/api/v1/executions/${(await json(res)).executionId}`);
    expect(execution.body.warnings.join(' ')).toContain('body.extra');
  });
});
