import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const cookieOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;

describe('UI accounts', () => {
  let cookie: string;
  let csrf: string;

  it('asks for an owner account on first start, once', async () => {
    const status = await json(await fetch(`${server.url}/api/v1/auth/status`));
    expect(status).toEqual({ setupRequired: true, user: null, csrfToken: null });

    const short = await post('/auth/setup', { email: 'owner@example.com', password: 'short' });
    expect(short.status).toBe(400);
    expect((await json(short)).code).toBe('validation_failed');

    const res = await post('/auth/setup', { email: 'Owner@Example.com', password: 'correct horse battery' });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.user).toEqual({ email: 'owner@example.com', role: 'owner' });
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^hookflow_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i); // base URL is http in this test

    const again = await post('/auth/setup', { email: 'x@example.com', password: 'another password' });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('setup_done');
  });

  it('signs in with the password (stored hashed) and uses the cookie with a CSRF token for writes', async () => {
    const wrong = await post('/auth/login', { email: 'owner@example.com', password: 'wrong password' });
    expect(wrong.status).toBe(401);
    const res = await post('/auth/login', { email: 'owner@example.com', password: 'correct horse battery' });
    expect(res.status).toBe(200);
    cookie = cookieOf(res);
    csrf = (await json(res)).csrfToken;

    const users = await server.hookflow.store.db.selectFrom('users').selectAll().execute();
    expect(users[0]!.password_hash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(users)).not.toContain('correct horse battery');

    const list = await fetch(`${server.url}/api/v1/workflows`, { headers: { cookie } });
    expect(list.status).toBe(200);

    const noCsrf = await post('/workflows', { name: 'x' }, { cookie });
    expect(noCsrf.status).toBe(403);
    expect((await json(noCsrf)).code).toBe('csrf_failed');
    const withCsrf = await post('/workflows', { name: 'x' }, { cookie, 'x-csrf-token': csrf });
    expect(withCsrf.status).toBe(201);

    const status = await json(await fetch(`${server.url}/api/v1/auth/status`, { headers: { cookie } }));
    expect(status).toEqual({
      setupRequired: false,
      user: { email: 'owner@example.com', role: 'owner' },
      csrfToken: csrf,
    });
  });

  it('keeps the session cookie out of stored webhook items', async () => {
    const wf = await json(
      await post(
        '/workflows',
        { name: 'c', trigger: { path: 'cookie-check' } },
        { cookie, 'x-csrf-token': csrf },
      ),
    );
    await post(`/workflows/${wf.id}/activate`, {}, { cookie, 'x-csrf-token': csrf });
    const res = await fetch(`${server.url}/webhook/cookie-check`, {
      method: 'POST',
      headers: { cookie: `theme=dark; ${cookie}` },
      body: 'a=1',
    });
    const { executionId } = await json(res);
    const execution = await json(
      await fetch(`${server.url}/api/v1/executions/${executionId}`, { headers: { cookie } }),
    );
    expect(execution.trigger.headers.cookie).toBe('theme=dark');
  });

  it('signs out', async () => {
    expect((await post('/auth/logout', {}, { cookie })).status).toBe(204);
    expect((await fetch(`${server.url}/api/v1/workflows`, { headers: { cookie } })).status).toBe(401);
  });

  it('throttles repeated failed sign-ins with 429 and Retry-After', async () => {
    const attempt = () => post('/auth/login', { email: 'owner@example.com', password: 'nope nope nope' });
    for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(401);
    const res = await attempt();
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(res)).code).toBe('rate_limited');
  });
});
