import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('management API auth', () => {
  it.each([
    ['no header', {}],
    ['wrong scheme', { authorization: 'Basic Zm9vOmJhcg==' }],
    ['unknown token', { authorization: 'Bearer hf_not-a-real-token' }],
  ])('answers 401 unauthorized with %s', async (_name, headers) => {
    const res = await fetch(`${server.url}/api/v1/workflows`, { headers });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = await json(res);
    expect(body.code).toBe('unauthorized');
    expect(body.message).toEqual(expect.any(String));
    expect(body.hint).toContain('hookflow tokens create');
  });

  it('puts X-Request-Id on every response, keeping a sane incoming one', async () => {
    const ok = await server.api('GET', '/api/v1/workflows');
    expect(ok.headers.get('x-request-id')).toMatch(UUID);
    const denied = await fetch(`${server.url}/api/v1/workflows`, {
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(denied.headers.get('x-request-id')).toBe('trace-123');
    const missing = await fetch(`${server.url}/nothing-here`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).code).toBe('route_not_found');
    expect(missing.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('workflows', () => {
  it('creates a workflow with both URLs and SPEC defaults', async () => {
    const res = await server.api('POST', '/api/v1/workflows', { name: 'Orders' });
    expect(res.status).toBe(201);
    const wf = res.body;
    expect(wf).toMatchObject({ name: 'Orders', active: false, version: 1, steps: [] });
    expect(wf.id).toMatch(UUID);
    expect(wf.trigger.methods).toEqual(['POST']);
    expect(wf.trigger.path).toMatch(UUID);
    expect(wf.trigger.auth).toEqual({ type: 'none' });
    expect(wf.trigger.response).toEqual({ mode: 'immediately' });
    expect(wf.trigger.testUrl).toBe(`http://hookflow.test/webhook-test/${wf.trigger.path}`);
    expect(wf.trigger.productionUrl).toBe(`http://hookflow.test/webhook/${wf.trigger.path}`);
    expect(Date.parse(wf.createdAt)).not.toBeNaN();
  });

  it('normalises the path: leading and trailing slashes are ignored', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'p',
      trigger: { path: '/shop/orders/:id/' },
    });
    expect(res.status).toBe(201);
    expect(res.body.trigger.path).toBe('shop/orders/:id');
    expect(res.body.trigger.productionUrl).toBe('http://hookflow.test/webhook/shop/orders/:id');
  });

  it.each([
    ['missing name', {}, '/name'],
    ['empty name', { name: '' }, '/name'],
    ['unknown method', { name: 'x', trigger: { methods: ['FETCH'] } }, '/trigger/methods/0'],
    ['no methods', { name: 'x', trigger: { methods: [] } }, '/trigger/methods'],
    ['bad path segment', { name: 'x', trigger: { path: 'a b/c' } }, '/trigger/path'],
    ['unknown auth type', { name: 'x', trigger: { auth: { type: 'magic' } } }, '/trigger/auth'],
    ['unknown top-level field', { name: 'x', colour: 'red' }, 'colour'],
    [
      'duplicate step names',
      {
        name: 'x',
        steps: [
          { name: 's', type: 'set', fields: {} },
          { name: 's', type: 'set', fields: {} },
        ],
      },
      '/steps/1/name',
    ],
  ])('refuses %s with 400 validation_failed naming the field', async (_name, body, field) => {
    const before = await server.api('GET', '/api/v1/workflows?limit=200');
    const res = await server.api('POST', '/api/v1/workflows', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.fields.map((f: { field: string }) => f.field).join(' ')).toContain(field);
    expect(res.body.message).toContain(field);
    const after = await server.api('GET', '/api/v1/workflows?limit=200');
    expect(after.body.items.length).toBe(before.body.items.length);
  });

  it('refuses a body that is not JSON with 400 invalid_body', async () => {
    const res = await fetch(`${server.url}/api/v1/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('invalid_body');
  });

  it('gets, replaces, patches and deletes, bumping the version on every save', async () => {
    const created = (await server.api('POST', '/api/v1/workflows', { name: 'v', trigger: { path: 'crud' } }))
      .body;
    const got = await server.api('GET', `/api/v1/workflows/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);

    const put = await server.api('PUT', `/api/v1/workflows/${created.id}`, {
      name: 'v2',
      trigger: { path: 'crud2', methods: ['GET', 'POST'] },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: 'v2',
      version: 2,
      trigger: { path: 'crud2', methods: ['GET', 'POST'] },
    });

    const patch = await server.api('PATCH', `/api/v1/workflows/${created.id}`, {
      trigger: { response: { mode: 'immediately', status: 202 } },
    });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({
      name: 'v2',
      version: 3,
      trigger: { path: 'crud2', methods: ['GET', 'POST'], response: { status: 202 } },
    });

    const badPatch = await server.api('PATCH', `/api/v1/workflows/${created.id}`, {
      trigger: { methods: ['NOPE'] },
    });
    expect(badPatch.status).toBe(400);
    expect(badPatch.body.code).toBe('validation_failed');
    expect((await server.api('GET', `/api/v1/workflows/${created.id}`)).body.version).toBe(3);

    expect((await server.api('DELETE', `/api/v1/workflows/${created.id}`)).status).toBe(204);
    const gone = await server.api('GET', `/api/v1/workflows/${created.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
  });

  it.each([
    ['GET', ''],
    ['PUT', ''],
    ['PATCH', ''],
    ['DELETE', ''],
    ['POST', '/activate'],
    ['POST', '/deactivate'],
  ])('answers 404 not_found for %s of an unknown id%s', async (method, suffix) => {
    const body = method === 'PUT' ? { name: 'x' } : method === 'PATCH' ? {} : undefined;
    const res = await server.api(
      method,
      `/api/v1/workflows/01a1fffd-0000-7000-8000-000000000000${suffix}`,
      body,
    );
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('pages lists newest first with an opaque cursor', async () => {
    const names = ['page-a', 'page-b', 'page-c'];
    for (const name of names) await server.api('POST', '/api/v1/workflows', { name });
    const first = await server.api('GET', '/api/v1/workflows?limit=2');
    expect(first.body.items.map((w: { name: string }) => w.name)).toEqual(['page-c', 'page-b']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await server.api('GET', `/api/v1/workflows?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items[0].name).toBe('page-a');
    const bad = await server.api('GET', '/api/v1/workflows?cursor=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

describe('activation', () => {
  it('refuses a second active workflow on the same method and path with 409 path_conflict', async () => {
    const a = (
      await server.api('POST', '/api/v1/workflows', {
        name: 'A',
        trigger: { path: 'shared/:id', methods: ['POST'] },
      })
    ).body;
    const b = (
      await server.api('POST', '/api/v1/workflows', {
        name: 'B',
        trigger: { path: 'shared/:other', methods: ['PUT', 'POST'] },
      })
    ).body;
    const c = (
      await server.api('POST', '/api/v1/workflows', {
        name: 'C',
        trigger: { path: 'shared/:x', methods: ['GET'] },
      })
    ).body;

    const activated = await server.api('POST', `/api/v1/workflows/${a.id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body.active).toBe(true);

    const conflict = await server.api('POST', `/api/v1/workflows/${b.id}/activate`);
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('path_conflict');
    expect(conflict.body.message).toContain(a.id);
    expect((await server.api('GET', `/api/v1/workflows/${b.id}`)).body.active).toBe(false);

    // Same path, other method: no conflict.
    expect((await server.api('POST', `/api/v1/workflows/${c.id}/activate`)).status).toBe(200);

    // Saving C onto A's method is a conflict too, and changes nothing.
    const save = await server.api('PATCH', `/api/v1/workflows/${c.id}`, {
      trigger: { methods: ['GET', 'POST'] },
    });
    expect(save.status).toBe(409);
    expect((await server.api('GET', `/api/v1/workflows/${c.id}`)).body.trigger.methods).toEqual(['GET']);

    expect((await server.api('POST', `/api/v1/workflows/${a.id}/deactivate`)).body.active).toBe(false);
    expect((await server.api('POST', `/api/v1/workflows/${b.id}/activate`)).status).toBe(200);
  });

  it('serves the production URL only while active, and a save applies once published', async () => {
    const wf = (
      await server.api('POST', '/api/v1/workflows', { name: 'live', trigger: { path: 'live-one' } })
    ).body;
    const call = (path: string) => fetch(`${server.url}/webhook/${path}`, { method: 'POST', body: 'a=1' });
    expect((await call('live-one')).status).toBe(404);
    await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    expect((await call('live-one')).status).toBe(200);
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { trigger: { path: 'live-two' } });
    // A save is a draft (SPEC 1): production keeps the published path until publish.
    expect((await call('live-one')).status).toBe(200);
    expect((await call('live-two')).status).toBe(404);
    await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    expect((await call('live-one')).status).toBe(404);
    expect((await call('live-two')).status).toBe(200);
    await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
    const res = await call('live-two');
    expect(res.status).toBe(404);
    expect((await json(res)).code).toBe('webhook_not_registered');
  });
});

describe('tokens', () => {
  it('creates (shown once), lists (never the token) and revokes', async () => {
    const created = await server.api('POST', '/api/v1/tokens', { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^hf_/);
    const list = await server.api('GET', '/api/v1/tokens');
    const listed = list.body.items.find((t: { id: string }) => t.id === created.body.id);
    expect(listed).toMatchObject({ name: 'ci', prefix: created.body.token.slice(0, 8) });
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);

    const withNew = await fetch(`${server.url}/api/v1/workflows`, {
      headers: { authorization: `Bearer ${created.body.token}` },
    });
    expect(withNew.status).toBe(200);
    expect((await server.api('DELETE', `/api/v1/tokens/${created.body.id}`)).status).toBe(204);
    const revoked = await fetch(`${server.url}/api/v1/workflows`, {
      headers: { authorization: `Bearer ${created.body.token}` },
    });
    expect(revoked.status).toBe(401);
    expect((await server.api('DELETE', `/api/v1/tokens/${created.body.id}`)).status).toBe(404);
  });

  it('stores tokens hashed', async () => {
    const created = await server.api('POST', '/api/v1/tokens', { name: 'hash-check' });
    const rows = await server.hookflow.store.db.selectFrom('api_tokens').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(created.body.token);
  });
});

describe('operations', () => {
  it('serves health, readiness and Prometheus metrics', async () => {
    for (const path of ['/healthz', '/api/v1/healthz']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ status: 'ok' });
    }
    const ready = await fetch(`${server.url}/readyz`);
    expect(await json(ready)).toEqual({ status: 'ready' });
    const metrics = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toContain('hookflow_webhook_requests_total');
    expect(text).toContain('hookflow_process_resident_memory_bytes');
  });

  it('publishes an OpenAPI 3 document generated from the route schemas, and docs', async () => {
    const res = await fetch(`${server.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/workflows',
        '/api/v1/workflows/{id}',
        '/api/v1/workflows/{id}/activate',
        '/api/v1/tokens',
        '/api/v1/executions',
      ]),
    );
    expect(
      doc.paths['/api/v1/workflows'].post.requestBody.content['application/json'].schema.required,
    ).toContain('name');
    const docs = await fetch(`${server.url}/api/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  });
});
