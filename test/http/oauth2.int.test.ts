/**
 * OAuth2 credentials (SPEC 7e) over HTTP, against a real OAuth2 server (oauth2-mock-server on
 * loopback) and a local API that checks the bearer token: client credentials fetched at first use,
 * kept, renewed before expiry and after a 401; the authorization code flow with PKCE driven through
 * the server's authorize endpoint (its redirect followed by hand, as a browser would); refresh
 * before expiry with the rotated refresh token kept; a refused refresh → needs_reconnect and
 * credential_expired; the callback's state single use; no token in any API answer, record, log,
 * export or stored file.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main as cli } from '../../src/cli.js';
import { renewAt } from '../../src/credentials/oauth2.js';
import { REDACT } from '../../src/log.js';
import { finishedExecution } from '../engine/int-helpers.js';
import { type MockOAuth2, startOAuth2Server } from '../helpers/oauth2.js';
import { createActiveWorkflow, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

/** The API the workflows call: 401 for a token in `refuse`, else 200 echoing the Authorization header. */
async function startApi() {
  const seen: string[] = [];
  const refuse = new Set<string>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const auth = req.headers.authorization ?? '';
      seen.push(auth);
      const token = auth.replace(/^Bearer /, '');
      res.setHeader('content-type', 'application/json');
      if (refuse.has(token)) {
        res.statusCode = 401;
        res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
        // An API that quotes what it refused (some do): not to be recorded in clear.
        return res.end(JSON.stringify({ error: 'invalid_token', got: auth }));
      }
      res.end(JSON.stringify({ ok: true, echo: auth }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    refuse,
    lastToken: () => (seen.at(-1) ?? '').replace(/^Bearer /, ''),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('oauth2 credentials', () => {
  let server: TestServer;
  let provider: MockOAuth2;
  let api: Awaited<ReturnType<typeof startApi>>;
  const logLines: string[] = [];
  let paths = 0;

  beforeAll(async () => {
    provider = await startOAuth2Server();
    api = await startApi();
    const log = pino(
      { level: 'trace', redact: { paths: REDACT, censor: '***' } },
      { write: (line: string) => void logLines.push(line) },
    );
    server = await startTestServer({ log, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await server?.close();
    await provider?.close();
    await api?.close();
  });
  beforeEach(() => {
    provider.answer(undefined);
  });

  const grants = (type: string) => provider.exchanges.filter((e) => e.grantType === type);

  async function credential(data: Record<string, string>, name = 'API') {
    const res = await server.api('POST', '/api/v1/credentials', { name, type: 'oauth2', data });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; oauth2: Record<string, unknown> };
  }

  /** An active workflow calling the API with credential `id`; `run()` fires it and waits. */
  async function workflowUsing(id: string) {
    const p = `oauth-${++paths}`;
    await createActiveWorkflow(server, {
      name: p,
      trigger: { path: p },
      steps: [{ name: 'call', type: 'http', url: `${api.url}/things`, credential: id }],
    });
    return async () => {
      const res = await fetch(`${server.url}/webhook/${p}`, { method: 'POST' });
      expect(res.status).toBe(200);
      const { executionId } = (await res.json()) as { executionId: string };
      return finishedExecution(server, executionId);
    };
  }

  const state = async (id: string) => (await server.api('GET', `/api/v1/credentials/${id}`)).body.oauth2;

  /** Connects credential `id` as a person would: open authorizeUrl, follow the provider's redirect. */
  async function connect(id: string) {
    const started = await server.api('POST', `/api/v1/credentials/${id}/oauth2/authorize`);
    expect(started.status).toBe(200);
    const authorizeUrl = new URL(started.body.authorizeUrl);
    // The provider signs the person in and redirects the browser back to the callback.
    const atProvider = await fetch(authorizeUrl, { redirect: 'manual' });
    expect(atProvider.status).toBe(302);
    const back = new URL(atProvider.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe('http://hookflow.test/oauth2/callback');
    // HOOKFLOW_BASE_URL is http://hookflow.test: the same path on the server's real address.
    const callback = `${server.url}${back.pathname}${back.search}`;
    const page = await fetch(callback);
    return { authorizeUrl, callback, page, html: await page.text() };
  }

  it('client credentials: fetched at first use, kept, sent as Bearer, its state shown, never a token', async () => {
    const cred = await credential({
      grantType: 'client_credentials',
      tokenUrl: provider.tokenUrl,
      clientId: 'billing-client',
      clientSecret: 'cc-SECRET-4f1a',
      scope: 'things:read',
      audience: 'https://api.example',
    });
    expect(cred.oauth2).toEqual({
      state: 'not_connected',
      expiresAt: null,
      refreshedAt: null,
      lastError: null,
    });
    expect(grants('client_credentials')).toHaveLength(0);

    const run = await workflowUsing(cred.id);
    const first = await run();
    expect(first.status).toBe('succeeded');
    const second = await run();
    expect(second.status).toBe('succeeded');

    // One token request for both runs, with the credential's client, scope and audience.
    const exchanges = grants('client_credentials');
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]!.body).toMatchObject({
      client_id: 'billing-client',
      client_secret: 'cc-SECRET-4f1a',
      scope: 'things:read',
      audience: 'https://api.example',
    });
    const token = exchanges[0]!.response.access_token as string;
    expect(api.seen.slice(-2)).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
    // Recorded as "***", the echo too.
    expect(first.steps[0].request.headers.authorization).toBe('***');
    expect(first.steps[0].output.body.echo).toBe('***');

    const shown = await state(cred.id);
    expect(shown).toMatchObject({ state: 'connected', lastError: null });
    expect(Date.parse(shown.expiresAt) - Date.parse(shown.refreshedAt)).toBe(3600_000);
  });

  it('client credentials: renewed in the token’s last part of life, before it expires', async () => {
    const cred = await credential({
      grantType: 'client_credentials',
      tokenUrl: provider.tokenUrl,
      clientId: 'short-lived',
      clientSecret: 'cc-SECRET-77d0',
    });
    // Tokens that live 4 s: renewed from their second half on (renewAt).
    provider.answer(({ response }) => {
      if (response.statusCode === 200) response.body.expires_in = 4;
    });
    const run = await workflowUsing(cred.id);
    expect((await run()).status).toBe('succeeded');
    const first = api.lastToken();
    const shown = await state(cred.id);
    const renewFrom = renewAt(Date.parse(shown.refreshedAt), Date.parse(shown.expiresAt));
    expect(Date.parse(shown.expiresAt) - renewFrom).toBe(2_000);
    // Into the renewal window (the token is still valid for up to 2 s more).
    await new Promise((r) => setTimeout(r, Math.max(0, renewFrom - Date.now() + 50)));
    expect((await run()).status).toBe('succeeded');
    expect(api.lastToken()).not.toBe(first);
    expect(grants('client_credentials').filter((e) => e.body.client_id === 'short-lived')).toHaveLength(2);
  });

  it('client credentials: a 401 from the API renews the token once and the call is made again', async () => {
    const cred = await credential({
      grantType: 'client_credentials',
      tokenUrl: provider.tokenUrl,
      clientId: 'revoked-early',
      clientSecret: 'cc-SECRET-0b9e',
    });
    const run = await workflowUsing(cred.id);
    expect((await run()).status).toBe('succeeded');
    const old = api.lastToken();
    api.refuse.add(old);

    const execution = await run();
    expect(execution.status, JSON.stringify(execution.error)).toBe('succeeded');
    const fresh = api.lastToken();
    expect(fresh).not.toBe(old);
    expect(api.seen.slice(-2)).toEqual([`Bearer ${old}`, `Bearer ${fresh}`]);
    expect(execution.steps[0].attempts.map((a: { status: number }) => a.status)).toEqual([401, 200]);
    expect(grants('client_credentials').filter((e) => e.body.client_id === 'revoked-early')).toHaveLength(2);

    // Refused again after the renewal: the step fails with the API's answer; one renewal per step.
    api.refuse.add(fresh);
    provider.answer(({ response }) => {
      if (response.statusCode === 200) response.body.access_token = fresh;
    });
    const refused = await run();
    expect(refused.status).toBe('failed');
    expect(refused.error.message).toContain('answered 401');
    expect(JSON.stringify(refused)).not.toContain(fresh);
  });

  it('authorization code with PKCE: connects through the provider, refreshes before expiry, keeps a rotated refresh token', async () => {
    const cred = await credential(
      {
        grantType: 'authorization_code',
        tokenUrl: provider.tokenUrl,
        authorizationUrl: `${provider.authorizeUrl}?access_type=offline&prompt=consent`,
        clientId: 'calendar-app',
        clientSecret: 'ac-SECRET-c0de',
        scope: 'openid calendar',
      },
      'Calendar',
    );
    // Not connected: a step using it fails with credential_expired, saying what to do.
    const run = await workflowUsing(cred.id);
    const early = await run();
    expect(early.status).toBe('failed');
    expect(early.error).toMatchObject({ code: 'credential_expired' });
    expect(early.error.message).toContain('Connect');

    // The code exchange answers with a token that is already due: the first use refreshes it.
    provider.answer(({ grantType, response }) => {
      if (grantType === 'authorization_code') response.body.expires_in = 0;
    });
    const { authorizeUrl, callback, page, html } = await connect(cred.id);
    expect(Object.fromEntries(authorizeUrl.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'calendar-app',
      redirect_uri: 'http://hookflow.test/oauth2/callback',
      scope: 'openid calendar',
      code_challenge_method: 'S256',
      access_type: 'offline',
      prompt: 'consent',
    });
    expect(authorizeUrl.searchParams.get('state')).toMatch(/^[\w-]{40,}$/);
    expect(authorizeUrl.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(page.status).toBe(200);
    expect(html).toContain('Connected — you can close this tab');

    // The code went with the PKCE verifier and the callback URL.
    const exchange = grants('authorization_code').at(-1)!;
    expect(exchange.body).toMatchObject({
      client_id: 'calendar-app',
      client_secret: 'ac-SECRET-c0de',
      redirect_uri: 'http://hookflow.test/oauth2/callback',
      code_verifier: expect.stringMatching(/^[\w-]{43,128}$/),
    });
    expect((await state(cred.id)).state).toBe('connected');

    // The state works once.
    const replay = await fetch(callback);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('press Connect again');

    // The audit log names who connected it (the API token that asked for the authorize URL).
    const audit = await server.api('GET', '/api/v1/audit?action=credential.connect');
    expect(audit.body.items[0]).toMatchObject({
      action: 'credential.connect',
      actor: { type: 'token' },
      target: { type: 'credential', id: cred.id, name: 'Calendar' },
    });

    // First use: the token is due, so it is refreshed first with the refresh token of the exchange.
    const refreshesBefore = grants('refresh_token').length;
    expect((await run()).status).toBe('succeeded');
    const refreshes = grants('refresh_token').slice(refreshesBefore);
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]!.body.refresh_token).toBe(exchange.response.refresh_token);
    expect(api.lastToken()).toBe(refreshes[0]!.response.access_token);

    // A 401 refreshes again, with the refresh token the last refresh rotated in.
    api.refuse.add(api.lastToken());
    expect((await run()).status).toBe('succeeded');
    const next = grants('refresh_token').slice(refreshesBefore);
    expect(next).toHaveLength(2);
    expect(next[1]!.body.refresh_token).toBe(next[0]!.response.refresh_token);
    expect(next[1]!.body.refresh_token).not.toBe(exchange.response.refresh_token);
    expect(api.lastToken()).toBe(next[1]!.response.access_token);
    expect(await state(cred.id)).toMatchObject({ state: 'connected', lastError: null });
  });

  it('a refused refresh sets needs_reconnect and fails steps with credential_expired until reconnected', async () => {
    const cred = await credential({
      grantType: 'authorization_code',
      tokenUrl: provider.tokenUrl,
      authorizationUrl: provider.authorizeUrl,
      clientId: 'revoked-app',
      clientSecret: 'ac-SECRET-9a9a',
    });
    provider.answer(({ grantType, response }) => {
      if (grantType === 'authorization_code') response.body.expires_in = 0;
      if (grantType === 'refresh_token') {
        response.statusCode = 400;
        response.body = { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' };
      }
    });
    expect((await connect(cred.id)).page.status).toBe(200);
    const run = await workflowUsing(cred.id);
    const failed = await run();
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step: 'call', code: 'credential_expired' });
    expect(failed.error.message).toContain('invalid_grant');
    expect(failed.error.message).toContain('Reconnect');
    const shown = await state(cred.id);
    expect(shown.state).toBe('needs_reconnect');
    expect(shown.lastError).toContain('invalid_grant');
    expect(shown.lastError).toContain('revoked');

    // No second attempt at the token endpoint: the credential waits for a person.
    const refreshes = grants('refresh_token').length;
    const again = await run();
    expect(again.error).toMatchObject({ code: 'credential_expired' });
    expect(grants('refresh_token')).toHaveLength(refreshes);

    // Reconnect: works again.
    provider.answer(undefined);
    expect((await connect(cred.id)).page.status).toBe(200);
    expect((await state(cred.id)).state).toBe('connected');
    expect((await run()).status).toBe('succeeded');
  });

  it('the callback explains a refusal, an unknown state, and a provider error', async () => {
    const unknown = await fetch(`${server.url}/oauth2/callback?code=abc&state=never-issued`);
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('content-type')).toContain('text/html');
    expect(await unknown.text()).toContain('expired or was already used');

    const cred = await credential({
      grantType: 'authorization_code',
      tokenUrl: provider.tokenUrl,
      authorizationUrl: provider.authorizeUrl,
      clientId: 'denied-app',
      clientSecret: 'ac-SECRET-dead',
    });
    const started = await server.api('POST', `/api/v1/credentials/${cred.id}/oauth2/authorize`);
    const stateParam = new URL(started.body.authorizeUrl).searchParams.get('state')!;
    const denied = await fetch(
      `${server.url}/oauth2/callback?error=access_denied&error_description=${encodeURIComponent('<b>The user said no</b>')}&state=${stateParam}`,
    );
    expect(denied.status).toBe(400);
    const text = await denied.text();
    expect(text).toContain('did not grant access');
    expect(text).toContain('access_denied');
    // Escaped, not markup.
    expect(text).toContain('&lt;b&gt;The user said no&lt;/b&gt;');
    expect((await state(cred.id)).lastError).toContain('access_denied');

    // Client credentials have nothing to connect; other types neither.
    const cc = await credential({
      grantType: 'client_credentials',
      tokenUrl: provider.tokenUrl,
      clientId: 'x',
      clientSecret: 'y',
    });
    const refused = await server.api('POST', `/api/v1/credentials/${cc.id}/oauth2/authorize`);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation_failed');
    expect((await server.api('POST', '/api/v1/credentials/nope/oauth2/authorize')).status).toBe(404);
  });

  it('validates the data: authorizationUrl for the code grant, URLs, known fields', async () => {
    const post = (data: Record<string, string>) =>
      server.api('POST', '/api/v1/credentials', { name: 'x', type: 'oauth2', data });
    const noAuthUrl = await post({
      grantType: 'authorization_code',
      tokenUrl: provider.tokenUrl,
      clientId: 'a',
      clientSecret: 'b',
    });
    expect(noAuthUrl.status).toBe(400);
    expect(noAuthUrl.body.fields).toContainEqual(
      expect.objectContaining({ field: '/data/authorizationUrl' }),
    );
    const badUrl = await post({
      grantType: 'client_credentials',
      tokenUrl: 'ftp://x',
      clientId: 'a',
      clientSecret: 'b',
    });
    expect(badUrl.body.fields).toContainEqual(expect.objectContaining({ field: '/data/tokenUrl' }));
    const badGrant = await post({
      grantType: 'password',
      tokenUrl: provider.tokenUrl,
      clientId: 'a',
      clientSecret: 'b',
    });
    expect(badGrant.body.fields).toContainEqual(expect.objectContaining({ field: '/data/grantType' }));
  });

  it('rotating the client secret keeps the connection; changing the client drops it', async () => {
    const cred = await credential({
      grantType: 'authorization_code',
      tokenUrl: provider.tokenUrl,
      authorizationUrl: provider.authorizeUrl,
      clientId: 'rotating-app',
      clientSecret: 'ac-SECRET-1111',
    });
    await connect(cred.id);
    const rotated = await server.api('PATCH', `/api/v1/credentials/${cred.id}`, {
      data: { clientSecret: 'ac-SECRET-2222' },
    });
    expect(rotated.body.oauth2.state).toBe('connected');
    const moved = await server.api('PATCH', `/api/v1/credentials/${cred.id}`, {
      data: { clientId: 'another-app' },
    });
    expect(moved.body.oauth2.state).toBe('not_connected');
  });

  it('no token appears in API answers, records, logs, the export or the data dir', async () => {
    const tokens = provider.tokens();
    expect(tokens.length).toBeGreaterThan(5);
    const secrets = [...tokens, 'cc-SECRET-4f1a', 'ac-SECRET-c0de'];
    const check = (text: string, label: string) => {
      for (const t of secrets) expect(text.includes(t), `${label} holds ${t.slice(0, 12)}…`).toBe(false);
    };
    check(JSON.stringify((await server.api('GET', '/api/v1/credentials?limit=100')).body), 'credential list');
    const executions = await server.api('GET', '/api/v1/executions?limit=200');
    for (const e of executions.body.items)
      check(
        JSON.stringify((await server.api('GET', `/api/v1/executions/${e.id}`)).body),
        `execution ${e.id}`,
      );
    check(JSON.stringify((await server.api('GET', '/api/v1/audit?limit=200')).body), 'audit log');
    check(logLines.join('\n'), 'log');
    const file = path.join(tempDir(), 'export.json');
    expect(await cli(['workflows', 'export', file, '--data-dir', server.dataDir])).toBe(0);
    check(fs.readFileSync(file, 'utf8'), 'export');
    for (const name of fs.readdirSync(server.dataDir)) {
      const full = path.join(server.dataDir, name);
      if (!fs.statSync(full).isFile()) continue;
      const bytes = fs.readFileSync(full);
      for (const t of secrets) expect(bytes.includes(Buffer.from(t)), `${name} holds a token`).toBe(false);
    }
  });
});
