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

    const setupCode = server.setupCode!;
    const short = await post('/auth/setup', { email: 'owner@example.com', password: 'short', setupCode });
    expect(short.status).toBe(400);
    expect((await json(short)).code).toBe('validation_failed');

    const res = await post('/auth/setup', {
      email: 'Owner@Example.com',
      password: 'correct horse battery',
      setupCode,
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.user).toEqual({ id: expect.any(String), email: 'owner@example.com', role: 'owner' });
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^hookflow_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i); // base URL is http in this test

    const again = await post('/auth/setup', {
      email: 'x@example.com',
      password: 'another password',
      setupCode,
    });
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
      user: { id: expect.any(String), email: 'owner@example.com', role: 'owner' },
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

  it('refuses setup once the owner exists before hashing anything: far faster than a sign-in', async () => {
    const timed = async (send: () => Promise<Response>) => {
      const started = performance.now();
      const res = await send();
      const ms = performance.now() - started;
      return { res, ms, body: await json(res) };
    };
    const setups: number[] = [];
    const logins: number[] = [];
    for (let i = 0; i < 3; i++) {
      const setup = await timed(() =>
        post('/auth/setup', { email: `late${i}@example.com`, password: 'a long enough password' }),
      );
      expect(setup.res.status).toBe(409);
      expect(setup.body.code).toBe('setup_done');
      setups.push(setup.ms);
      // A failed sign-in costs one scrypt (the unknown email is checked against a dummy hash).
      const login = await timed(() =>
        post('/auth/login', { email: 'timing@example.com', password: 'a long enough password' }),
      );
      expect(login.res.status).toBe(401);
      logins.push(login.ms);
    }
    // Before the fix each setup hashed the password first: as slow as a sign-in (ratio ~1).
    expect(Math.min(...setups)).toBeLessThan(Math.min(...logins) / 2);
    // Closed is closed, whatever the body: no validation error that would tell more.
    const invalid = await post('/auth/setup', { email: 'late@example.com', password: 'short' });
    expect(invalid.status).toBe(409);
    expect((await json(invalid)).code).toBe('setup_done');
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

describe('sign-in throttling per account, across addresses (behind a trusted proxy)', () => {
  let proxied: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ env: { HOOKFLOW_TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(() => proxied.close());

  const from = (address: string, path: string, body: unknown) =>
    fetch(`${proxied.url}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify(body),
    });
  const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };
  const wrong = (address: string) => from(address, '/auth/login', { ...OWNER, password: 'wrong guess' });
  const right = (address: string) => from(address, '/auth/login', OWNER);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('two setups at once: one owner, the other gets setup_done', async () => {
    const setupCode = proxied.setupCode;
    const results = await Promise.all([
      from('203.0.113.1', '/auth/setup', { ...OWNER, setupCode }),
      from('203.0.113.2', '/auth/setup', { ...OWNER, setupCode }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const users = await proxied.hookflow.store.db.selectFrom('users').select('email').execute();
    expect(users).toHaveLength(1);
  });

  it('counts failures from every address against the account, with a growing Retry-After', async () => {
    // Five failures, each from its own address (an attacker with a botnet, or a rotating proxy).
    for (let i = 1; i <= 5; i++) expect((await wrong(`198.51.100.${i}`)).status).toBe(401);
    const first = await wrong('198.51.100.6');
    expect(first.status).toBe(429);
    expect((await json(first)).code).toBe('rate_limited');
    const firstWait = Number(first.headers.get('retry-after'));
    expect(firstWait).toBeGreaterThanOrEqual(1);

    // Throttled means throttled: the right password is refused too until Retry-After has passed.
    expect((await right('198.51.100.7')).status).toBe(429);

    await sleep(firstWait * 1000 + 100);
    expect((await wrong('198.51.100.8')).status).toBe(401);
    const second = await wrong('198.51.100.9');
    expect(second.status).toBe(429);
    const secondWait = Number(second.headers.get('retry-after'));
    expect(secondWait).toBeGreaterThan(firstWait);

    await sleep(secondWait * 1000 + 100);
    expect((await right('198.51.100.10')).status).toBe(200);
    // A successful sign-in starts the account's count again.
    expect((await wrong('198.51.100.11')).status).toBe(401);
  });
});
