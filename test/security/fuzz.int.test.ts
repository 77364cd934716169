/**
 * Property-based tests (fast-check) against a real server: random bytes, content types, header
 * sets and paths thrown at the webhook URLs and the API never get a 5xx or crash the process, and a
 * rejected webhook call stores nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { HOOKFLOW_MAX_BODY_BYTES: '65536' } });
  await createActiveWorkflow(server, { trigger: { path: 'fuzz/:id', methods: ['POST', 'PUT', 'GET'] } });
  await createActiveWorkflow(server, {
    trigger: {
      path: 'fuzz-signed',
      auth: { type: 'hmac', preset: 'github', secret: 'fuzz-secret' },
      options: { maxBodyBytes: 4096 },
    },
  });
});
afterAll(() => server.close());

const count = async () =>
  (await server.hookflow.store.db.selectFrom('executions').select('id').execute()).length;

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'application/xml',
    'text/xml; charset=latin1',
    'text/plain; charset=utf-8',
    'multipart/form-data; boundary=XyZ',
    'multipart/form-data',
    'application/octet-stream',
    'application/vnd.api+json',
    'text/plain; charset=klingon',
    'garbage',
    '',
  ),
  fc.string({ maxLength: 40 }),
);

const headerName = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
  .filter(
    (h) =>
      ![
        'host',
        'content-length',
        'transfer-encoding',
        'connection',
        'expect',
        'upgrade',
        'keep-alive',
      ].includes(h),
  );
const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/);

const body = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }),
  fc.json().map((s) => new TextEncoder().encode(s)),
  fc.string().map((s) => new TextEncoder().encode(s)),
  fc
    .array(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })), { maxLength: 20 })
    .map((pairs) =>
      new TextEncoder().encode(
        pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'),
      ),
    ),
  fc.constant(
    new TextEncoder().encode('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XyZ'),
  ),
  fc.constant(
    new TextEncoder().encode(
      'a[b][c][d][e][f][g][h][i][j][k][l][m][n][o][p][q][r][s][t][u][v]=1&__proto__[x]=1',
    ),
  ),
);

describe('fuzzing the webhook URLs', () => {
  it('never answers 5xx, and stores exactly the accepted requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('fuzz/1', 'fuzz/abc', 'fuzz-signed', 'fuzz', 'nope/x'),
        fc.constantFrom('POST', 'PUT', 'GET', 'PATCH', 'DELETE'),
        contentType,
        fc.dictionary(headerName, headerValue, { maxKeys: 6 }),
        body,
        async (path, method, type, headers, bytes) => {
          const before = await count();
          const res = await fetch(`${server.url}/webhook/${path}`, {
            method,
            headers: { ...headers, ...(type ? { 'content-type': type } : {}) },
            body: method === 'GET' ? undefined : bytes,
          });
          await res.arrayBuffer();
          expect(res.status).toBeLessThan(500);
          const after = await count();
          expect(after - before).toBe(res.ok ? 1 : 0);
        },
      ),
      { numRuns: 150 },
    );
    // The `__proto__[x]=1` bodies polluted nothing.
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('never answers 5xx for random paths and methods', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.stringMatching(/^[A-Za-z0-9._~:-]{0,12}$/),
            fc.string({ maxLength: 8 }).map(encodeURIComponent),
          ),
          { maxLength: 6 },
        ),
        fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS', 'DELETE'),
        fc.constantFrom('webhook', 'webhook-test'),
        async (segments, method, prefix) => {
          const res = await fetch(`${server.url}/${prefix}/${segments.join('/')}`, { method });
          await res.arrayBuffer();
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('fuzzing the API', () => {
  it('never answers 5xx to random bodies and queries', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          ['POST', '/api/v1/workflows'],
          ['PATCH', '/api/v1/workflows/01a1fffd-0000-7000-8000-000000000000'],
          ['PUT', '/api/v1/workflows/not-an-id'],
          ['POST', '/api/v1/tokens'],
          ['GET', '/api/v1/executions'],
          ['GET', '/api/v1/workflows'],
        ),
        fc.oneof(fc.json(), fc.string({ maxLength: 200 })),
        fc.dictionary(
          fc.constantFrom('limit', 'cursor', 'status', 'mode', 'workflowId'),
          fc.string({ maxLength: 30 }),
          { maxKeys: 3 },
        ),
        async ([method, path], text, query) => {
          const qs = new URLSearchParams(query).toString();
          const res = await fetch(`${server.url}${path}${qs ? `?${qs}` : ''}`, {
            method,
            headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
            body: method === 'GET' ? undefined : text,
          });
          const answer = await res.text();
          expect(res.status).toBeLessThan(500);
          if (!res.ok)
            expect(JSON.parse(answer)).toMatchObject({
              code: expect.any(String),
              message: expect.any(String),
            });
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('global guards', () => {
  it('answers 503 overloaded past the cap on requests in progress', async () => {
    const small = await startTestServer({ env: { HOOKFLOW_MAX_CONCURRENT_REQUESTS: '2' } });
    try {
      const wf = (await small.api('POST', '/api/v1/workflows', { name: 'hold' })).body;
      const auth = { authorization: `Bearer ${small.token}` };
      // Two long-polls hold both places.
      const holds = [1, 2].map(() =>
        fetch(`${small.url}/api/v1/workflows/${wf.id}/test-events?waitSeconds=2`, { headers: auth }),
      );
      await new Promise((r) => setTimeout(r, 200));
      // The API/UI places (the probes take none, webhook calls have their own: request-gate test).
      const res = await fetch(`${small.url}/metrics`, { headers: auth });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await res.json()) as { code: string }).toMatchObject({ code: 'overloaded' });
      await Promise.all(holds);
      expect((await fetch(`${small.url}/metrics`, { headers: auth })).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});
