/**
 * What the server shows besides the API: `/metrics` only with a token (SPEC 8: an API token, a
 * signed-in session, or HOOKFLOW_METRICS_TOKEN), the probes to anyone, and the API docs page with
 * a Content-Security-Policy and X-Frame-Options like the UI's pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers/server.js';

const METRICS_TOKEN = 'prometheus-scrape-0123456789abcdef';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { HOOKFLOW_METRICS_TOKEN: METRICS_TOKEN } });
});
afterAll(() => server.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('/metrics behind a token', () => {
  const paths = ['/metrics', '/api/v1/metrics'];

  it.each(paths)('%s answers 401 unauthorized without a token, or with a wrong one', async (path) => {
    for (const headers of [
      {},
      bearer('wrong-token-0123456789abcdef'),
      bearer(`${METRICS_TOKEN}x`),
      bearer(METRICS_TOKEN.slice(0, -1)),
      { authorization: `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}` },
    ]) {
      const res = await get(path, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      const body = await json(res);
      expect(body.code).toBe('unauthorized');
      expect(JSON.stringify(body)).not.toContain('hookflow_');
    }
  });

  it.each(paths)('%s answers 200 with an API token, or with HOOKFLOW_METRICS_TOKEN', async (path) => {
    for (const token of [server.token, METRICS_TOKEN]) {
      const res = await get(path, bearer(token));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain('hookflow_webhook_requests_total');
    }
  });

  it('HOOKFLOW_METRICS_TOKEN opens /metrics and nothing else', async () => {
    const res = await get('/api/v1/workflows', bearer(METRICS_TOKEN));
    expect(res.status).toBe(401);
  });

  it('answers a signed-in session too (the UI)', async () => {
    const setup = await fetch(`${server.url}/api/v1/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: 'owner@example.com',
        password: 'correct horse battery',
        setupCode: server.setupCode,
      }),
    });
    expect(setup.status).toBe(201);
    const cookie = setup.headers.get('set-cookie')!.split(';')[0]!;
    expect((await get('/metrics', { cookie })).status).toBe(200);
  });

  it('keeps the probes open', async () => {
    for (const path of ['/healthz', '/readyz', '/api/v1/healthz', '/api/v1/readyz']) {
      expect((await get(path)).status, path).toBe(200);
    }
  });
});

describe('/api/docs headers', () => {
  it('serves the docs page (HTML that loads only its own files) with a CSP and X-Frame-Options: DENY', async () => {
    const page = await fetch(`${server.url}/api/docs`, { redirect: 'follow' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('swagger-ui-bundle.js');
    // No inline script, which the policy's script-src 'self' would block.
    expect([...html.matchAll(/<script\b[^>]*>/g)].every((m) => /\bsrc="/.test(m[0]))).toBe(true);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });

  it.each([
    '/api/docs/',
    '/api/docs/static/swagger-ui-bundle.js',
    '/api/docs/static/swagger-initializer.js',
    '/api/docs/static/swagger-ui.css',
    '/api/docs/json',
  ])('sends both headers with %s too', async (path) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });
});
