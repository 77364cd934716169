/**
 * hookflow behind a proxy that serves it under a path (HOOKFLOW_BASE_URL=http://…/hookflow): every
 * route answers with the path (a proxy that passes it on) and without it (one that strips it), the
 * URLs hookflow gives out carry it, and the session cookie is scoped to it. The UI under a path is
 * checked in a real browser in test/e2e/ui.e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutBasePath } from '../../src/shared/base-path.js';
import { createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

describe('withoutBasePath', () => {
  it.each([
    ['/hookflow/webhook/orders', '/webhook/orders'],
    ['/hookflow', '/'],
    ['/hookflow/', '/'],
    ['/hookflow?x=1', '/?x=1'],
    ['/hookflow/api/v1/workflows?limit=2', '/api/v1/workflows?limit=2'],
    // Not under the base path: as it came.
    ['/webhook/orders', '/webhook/orders'],
    ['/hookflowx/webhook/orders', '/hookflowx/webhook/orders'],
    ['/hook', '/hook'],
    ['/', '/'],
  ])('%s → %s', (url, expected) => {
    expect(withoutBasePath(url, '/hookflow')).toBe(expected);
  });
});

describe('a base URL with a path', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { HOOKFLOW_BASE_URL: 'http://hookflow.test/hookflow' } });
  });
  afterAll(() => server?.close());

  it('serves a webhook with and without the path, and gives out URLs with it', async () => {
    const wf = await createWorkflow(server, { trigger: { path: 'orders', methods: ['POST'] } });
    expect(wf.trigger.productionUrl).toBe('http://hookflow.test/hookflow/webhook/orders');
    expect(wf.trigger.testUrl).toBe('http://hookflow.test/hookflow/webhook-test/orders');
    expect((await server.api('POST', `/hookflow/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);

    for (const url of [`${server.url}/hookflow/webhook/orders`, `${server.url}/webhook/orders`]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'param1=a',
      });
      expect(res.status).toBe(200);
      const { executionId } = (await res.json()) as { executionId: string };
      const execution = await server.api('GET', `/hookflow/api/v1/executions/${executionId}`);
      expect(execution.status).toBe(200);
      // The trigger item tells the workflow the URL that was called, as the caller knows it.
      expect(execution.body.trigger.path).toBe('orders');
      expect(execution.body.trigger.webhookUrl).toBe('http://hookflow.test/hookflow/webhook/orders');
    }
  });

  it('answers a path that is neither a route nor under the base path with the JSON 404', async () => {
    const res = await server.api('GET', '/hookflowx/api/v1/workflows');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('route_not_found');
  });

  it('scopes the session cookie to the base path', async () => {
    const res = await fetch(`${server.url}/hookflow/api/v1/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: 'owner@example.com',
        password: 'correct horse battery',
        setupCode: server.setupCode,
      }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).toMatch(/; Path=\/hookflow\/(;|$)/);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;

    const me = await fetch(`${server.url}/hookflow/api/v1/auth/status`, { headers: { cookie } });
    expect(((await me.json()) as { user: { email: string } | null }).user?.email).toBe('owner@example.com');

    const out = await fetch(`${server.url}/hookflow/api/v1/auth/logout`, {
      method: 'POST',
      headers: { cookie },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/; Path=\/hookflow\/(;|$)/);
  });
});
