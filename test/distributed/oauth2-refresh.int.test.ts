/**
 * One refresh at a time per OAuth2 credential across processes (SPEC 7e): two `hookflow worker`
 * processes on one PostgreSQL each run an execution whose `http` step needs the credential's
 * access token, which is due, at the same moment. The provider (oauth2-mock-server) holds the
 * token request until both executions are running; released, it sees exactly one refresh, and
 * both calls reach the API with the token that refresh gave. A second refresh would spend the
 * refresh token twice: a provider that rotates them refuses the second and disconnects the account.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster, within } from '../helpers/cluster.js';
import { type MockOAuth2, startOAuth2Server } from '../helpers/oauth2.js';

describe('oauth2 refresh across two workers', () => {
  let cluster: Cluster;
  let provider: MockOAuth2;
  let api: http.Server;
  let apiUrl: string;
  const seen: string[] = [];

  beforeAll(async () => {
    provider = await startOAuth2Server();
    api = http.createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    // One execution in flight per worker: each of the two takes one of the two executions.
    cluster = await startCluster({
      webhooks: 1,
      workers: 2,
      env: {
        HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
        HOOKFLOW_EXECUTOR_CONCURRENCY: '1',
        HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: '1',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await provider?.close();
    api?.closeAllConnections();
    api?.close();
  });

  it('two workers needing a refresh at once make one refresh', async () => {
    const web = cluster.webhooks[0]!;
    const created = await cluster.api(web, 'POST', '/api/v1/credentials', {
      name: 'Shared',
      type: 'oauth2',
      data: {
        grantType: 'authorization_code',
        tokenUrl: provider.tokenUrl,
        authorizationUrl: provider.authorizeUrl,
        clientId: 'shared-app',
        clientSecret: 'shared-SECRET-1234',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // Connected with an access token that is due at once: its first use refreshes it.
    provider.answer(({ grantType, response }) => {
      if (grantType === 'authorization_code') response.body.expires_in = 0;
    });
    const started = await cluster.api(web, 'POST', `/api/v1/credentials/${id}/oauth2/authorize`);
    const redirect = await fetch(started.body.authorizeUrl, { redirect: 'manual' });
    const back = new URL(redirect.headers.get('location')!);
    const page = await fetch(`${web.url}${back.pathname}${back.search}`);
    expect(page.status).toBe(200);
    provider.answer(undefined);
    const exchanged = provider.exchanges.at(-1)!;

    const wf = await cluster.api(web, 'POST', '/api/v1/workflows', {
      name: 'shared-token',
      trigger: { path: 'shared-token' },
      steps: [{ name: 'call', type: 'http', url: `${apiUrl}/x`, credential: id }],
    });
    expect(wf.status).toBe(201);
    expect((await cluster.api(web, 'POST', `/api/v1/workflows/${wf.body.id}/activate`)).status).toBe(200);

    const release = provider.hold();
    const ids = await Promise.all(
      [1, 2].map(async () => {
        const res = await fetch(`${web.url}/webhook/shared-token`, { method: 'POST' });
        expect(res.status).toBe(200);
        return ((await res.json()) as { executionId: string }).executionId;
      }),
    );
    // Both running, one on each worker, and the provider holding the one refresh asked so far.
    await within(30_000, async () => {
      const { rows } = await cluster.sql.query<{ locked_by: string }>(
        `select locked_by from executions where id = any($1) and status = 'running'`,
        [ids],
      );
      return new Set(rows.map((r) => r.locked_by)).size === 2 && provider.waiting() >= 1;
    });
    expect(provider.waiting()).toBe(1);
    release();

    const finished = await within(30_000, async () => {
      const all = await Promise.all(ids.map((e) => cluster.api(web, 'GET', `/api/v1/executions/${e}`)));
      return all.every((r) => r.body.status === 'succeeded' || r.body.status === 'failed') && all;
    });
    for (const r of finished.value) expect(r.body.status, JSON.stringify(r.body.error)).toBe('succeeded');
    const refreshes = provider.exchanges.filter((e) => e.grantType === 'refresh_token');
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]!.body.refresh_token).toBe(exchanged.response.refresh_token);
    const token = refreshes[0]!.response.access_token as string;
    expect(seen.slice(-2)).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
  });
});
