/**
 * Credentials (SPEC 7c, issue 19) against a real server and a local receiver standing in for the
 * remote API: CRUD with `data` write-only; each type (bearer, header, basic, query) reaches the
 * receiver as it should; the secret is in no API answer, execution record, log line or export, nor
 * in clear in the SQLite file or the PostgreSQL tables; rotation takes effect on the next run;
 * unknown ids are refused on save (nested steps too); delete is 409 credential_in_use while a
 * draft or the published version names it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main as cli } from '../../src/cli.js';
import { REDACT } from '../../src/log.js';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  createActiveWorkflow,
  createWorkflow,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

interface Seen {
  path: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** The remote API: records each request and answers with what `reply` says (default: 200 echoing its headers). */
async function startReceiver() {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      seen.push({ path: url.pathname, url: req.url ?? '', headers: req.headers });
      res.setHeader('content-type', 'application/json');
      // An API that echoes what it got (many do, in errors): hookflow must not record it in clear.
      res.end(JSON.stringify({ headers: req.headers, url: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const SECRETS = {
  token: 'tok-SECRET-bearer-5c1e',
  header: 'hdr-SECRET-value-7a2b',
  password: 'pw-SECRET-basic-93fd',
  query: 'qry-SECRET-value-41aa',
};
const ALL = Object.values(SECRETS);
const basicEncoded = Buffer.from(`alice:${SECRETS.password}`).toString('base64');

const expectNoSecret = (what: unknown, label: string) => {
  const text = typeof what === 'string' ? what : JSON.stringify(what);
  for (const s of [...ALL, basicEncoded]) expect(text.includes(s), `${label} holds ${s}`).toBe(false);
};

async function createCredentials(server: TestServer) {
  const make = async (body: Record<string, unknown>) => {
    const res = await server.api('POST', '/api/v1/credentials', body);
    expect(res.status).toBe(201);
    return res.body;
  };
  return {
    bearer: await make({ name: 'Bearer API', type: 'bearer', data: { token: SECRETS.token } }),
    header: await make({
      name: 'Header API',
      type: 'header',
      data: { name: 'X-Api-Key', value: SECRETS.header },
    }),
    basic: await make({
      name: 'Basic API',
      type: 'basic',
      data: { username: 'alice', password: SECRETS.password },
    }),
    query: await make({ name: 'Query API', type: 'query', data: { name: 'api_key', value: SECRETS.query } }),
  };
}

const httpStep = (name: string, url: string, credential: string) => ({
  name,
  type: 'http',
  method: 'GET',
  url,
  credential,
});

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('credentials on $dialect', ({ dialect, postgres }) => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const logLines: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const log = pino(
      { level: 'trace', redact: { paths: REDACT, censor: '***' } },
      { write: (line: string) => void logLines.push(line) },
    );
    server = await startTestServer({ postgres, log, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('stores, lists, reads and rotates credentials without ever returning their data', async () => {
    const res = await server.api('POST', '/api/v1/credentials', {
      name: 'Stripe',
      type: 'bearer',
      data: { token: SECRETS.token },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: expect.any(String), name: 'Stripe', type: 'bearer' });
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'data', 'id', 'name', 'type', 'updatedAt']);
    expect(res.body.data).toEqual({ token: '***' });
    const id = res.body.id as string;

    const one = await server.api('GET', `/api/v1/credentials/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, name: 'Stripe', type: 'bearer', data: { token: '***' } });
    const list = await server.api('GET', '/api/v1/credentials?limit=200');
    expect(list.status).toBe(200);
    expect(list.body.nextCursor).toBeNull();
    expect(list.body.items.map((c: { id: string }) => c.id)).toContain(id);

    const renamed = await server.api('PATCH', `/api/v1/credentials/${id}`, {
      name: 'Stripe live',
      data: { token: '***' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Stripe live', data: { token: '***' } });

    for (const r of [res, one, list, renamed]) expectNoSecret(r.body, 'API answer');

    // Paging: limit 1 gives a cursor that leads on.
    await server.api('POST', '/api/v1/credentials', {
      name: 'Other',
      type: 'query',
      data: { name: 'k', value: 'v' },
    });
    const first = await server.api('GET', '/api/v1/credentials?limit=1');
    expect(first.body.items).toHaveLength(1);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await server.api('GET', `/api/v1/credentials?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);

    expect((await server.api('DELETE', `/api/v1/credentials/${id}`)).status).toBe(204);
    const gone = await server.api('GET', `/api/v1/credentials/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
  });

  it('refuses data that does not fit the type, naming the field', async () => {
    const missing = await server.api('POST', '/api/v1/credentials', { name: 'x', type: 'bearer', data: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('validation_failed');
    expect(missing.body.fields).toContainEqual(expect.objectContaining({ field: '/data/token' }));

    const extra = await server.api('POST', '/api/v1/credentials', {
      name: 'x',
      type: 'header',
      data: { name: 'X-Key', value: 'v', token: 't' },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.fields).toContainEqual(expect.objectContaining({ field: '/data/token' }));

    const badType = await server.api('POST', '/api/v1/credentials', { name: 'x', type: 'oauth2', data: {} });
    expect(badType.status).toBe(400);
    expect(badType.body.code).toBe('validation_failed');

    const badHeader = await server.api('POST', '/api/v1/credentials', {
      name: 'x',
      type: 'header',
      data: { name: 'Bad Header', value: 'v' },
    });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.fields).toContainEqual(expect.objectContaining({ field: '/data/name' }));

    const lineBreak = await server.api('POST', '/api/v1/credentials', {
      name: 'x',
      type: 'bearer',
      data: { token: 'abc\r\nX-Injected: 1' },
    });
    expect(lineBreak.status).toBe(400);
    expect(lineBreak.body.fields).toContainEqual(expect.objectContaining({ field: '/data/token' }));
  });

  it('applies each type to the request and records it masked; the secret is nowhere in clear', async () => {
    const creds = await createCredentials(server);
    const wf = await createActiveWorkflow(server, {
      name: `creds-${dialect}`,
      trigger: { path: `creds-${dialect}` },
      steps: [
        httpStep('bearer', `${receiver.url}/bearer`, creds.bearer.id),
        httpStep('header', `${receiver.url}/header`, creds.header.id),
        httpStep('basic', `${receiver.url}/basic`, creds.basic.id),
        httpStep('query', `${receiver.url}/query?page=2`, creds.query.id),
        // The old way, a key typed into the step: its request is recorded masked too.
        {
          name: 'inline',
          type: 'http',
          url: `${receiver.url}/inline`,
          headers: { 'X-Api-Key': 'inline-key-1234', Accept: 'application/json' },
        },
      ],
    });
    expectNoSecret(wf, 'workflow');

    const res = await fetch(`${server.url}/webhook/creds-${dialect}`, { method: 'POST' });
    expect(res.status).toBe(200);
    const execution = await finishedExecution(
      server,
      ((await res.json()) as { executionId: string }).executionId,
    );
    expect(execution.status).toBe('succeeded');

    const at = (p: string) => receiver.seen.filter((s) => s.path === p).at(-1)!;
    expect(at('/bearer').headers.authorization).toBe(`Bearer ${SECRETS.token}`);
    expect(at('/header').headers['x-api-key']).toBe(SECRETS.header);
    expect(at('/basic').headers.authorization).toBe(`Basic ${basicEncoded}`);
    const sentQuery = new URL(at('/query').url, 'http://x').searchParams;
    expect(sentQuery.get('api_key')).toBe(SECRETS.query);
    expect(sentQuery.get('page')).toBe('2');

    const [bearer, header, basic, query] = execution.steps;
    expect(bearer.request.headers.authorization).toBe('***');
    expect(header.request.headers['x-api-key']).toBe('***');
    expect(basic.request.headers.authorization).toBe('***');
    expect(query.request.url).toBe(`${receiver.url}/query?page=2&api_key=***`);
    expect(execution.steps[4].request.headers).toMatchObject({
      'x-api-key': '***',
      accept: 'application/json',
    });
    expect(bearer.attempts).toEqual([{ at: expect.any(String), status: 200 }]);
    // The receiver echoed the secrets back in its answers: recorded as "***".
    expect(bearer.output.body.headers.authorization).toBe('***');
    expectNoSecret(execution, 'execution record');

    const list = await server.api('GET', `/api/v1/executions?workflowId=${wf.id}`);
    expectNoSecret(list.body, 'executions list');
    const again = await server.api('GET', `/api/v1/workflows/${wf.id}`);
    expect(again.body.steps[0].credential).toBe(creds.bearer.id);

    // Logs (trace level: everything the server says).
    expect(logLines.length).toBeGreaterThan(0);
    expectNoSecret(logLines.join('\n'), 'log');

    if (!postgres) {
      // The export keeps the reference and holds no secret.
      const file = path.join(tempDir(), 'export.json');
      expect(await cli(['workflows', 'export', file, '--data-dir', server.dataDir])).toBe(0);
      const exported = fs.readFileSync(file, 'utf8');
      expect(exported).toContain(creds.query.id);
      expectNoSecret(exported, 'export');

      // Importing into an installation without those credentials names each missing one, and
      // refuses the workflow naming them.
      const errors: string[] = [];
      const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
        errors.push(args.join(' '));
      });
      try {
        expect(await cli(['workflows', 'import', file, '--data-dir', tempDir()])).toBe(1);
      } finally {
        spy.mockRestore();
      }
      const said = errors.join('\n');
      expect(said).toContain('lacks 4 credential(s)');
      for (const c of Object.values(creds)) expect(said).toContain(c.id);
      expect(said).toContain(`"creds-${dialect}" /steps/0/credential`);
      expect(said).toContain('Could not import');

      // The SQLite files (database and WAL) hold no secret in clear.
      for (const name of fs.readdirSync(server.dataDir)) {
        const full = path.join(server.dataDir, name);
        if (!fs.statSync(full).isFile()) continue;
        const bytes = fs.readFileSync(full);
        for (const s of [...ALL, basicEncoded])
          expect(bytes.includes(Buffer.from(s)), `${name} holds ${s}`).toBe(false);
      }
    } else {
      const client = new pg.Client({ connectionString: server.config.store.databaseUrl });
      await client.connect();
      try {
        const tables = await client.query<{ tablename: string }>(
          "select tablename from pg_tables where schemaname = 'public'",
        );
        expect(tables.rows.map((t) => t.tablename)).toContain('credentials');
        for (const { tablename } of tables.rows) {
          const rows = await client.query(`select t::text as row from "${tablename}" t`);
          expectNoSecret(rows.rows.map((r) => r.row).join('\n'), `table ${tablename}`);
        }
      } finally {
        await client.end();
      }
    }
  });

  it('rotation (PATCH data) takes effect on the next run', async () => {
    const cred = (
      await server.api('POST', '/api/v1/credentials', {
        name: 'rotating',
        type: 'bearer',
        data: { token: 'old-token-1234' },
      })
    ).body;
    await createActiveWorkflow(server, {
      name: `rotate-${dialect}`,
      trigger: { path: `rotate-${dialect}` },
      steps: [httpStep('call', `${receiver.url}/rotate`, cred.id)],
    });
    const run = async () => {
      const res = await fetch(`${server.url}/webhook/rotate-${dialect}`, { method: 'POST' });
      await finishedExecution(server, ((await res.json()) as { executionId: string }).executionId);
      return receiver.seen.filter((s) => s.path === '/rotate').at(-1)!.headers.authorization;
    };
    expect(await run()).toBe('Bearer old-token-1234');
    const patched = await server.api('PATCH', `/api/v1/credentials/${cred.id}`, {
      data: { token: 'new-token-5678' },
    });
    expect(patched.status).toBe(200);
    expect(JSON.stringify(patched.body)).not.toContain('new-token-5678');
    expect(await run()).toBe('Bearer new-token-5678');
  });

  it('refuses a step naming an unknown credential, nested steps included', async () => {
    const top = await server.api('POST', '/api/v1/workflows', {
      name: 'unknown credential',
      steps: [httpStep('call', `${receiver.url}/x`, '0190a0b0-0000-7000-8000-000000000000')],
    });
    expect(top.status).toBe(400);
    expect(top.body.code).toBe('validation_failed');
    expect(top.body.fields).toContainEqual(expect.objectContaining({ field: '/steps/0/credential' }));

    const nested = await server.api('POST', '/api/v1/workflows', {
      name: 'unknown nested credential',
      steps: [
        { name: 'set', type: 'set', fields: { a: 1 } },
        {
          name: 'branch',
          type: 'if',
          condition: '{{ true }}',
          then: [httpStep('inner', `${receiver.url}/x`, 'no-such-credential')],
        },
      ],
    });
    expect(nested.status).toBe(400);
    expect(nested.body.fields).toContainEqual(
      expect.objectContaining({ field: '/steps/1/then/0/credential' }),
    );
  });

  it('answers 409 credential_in_use while the draft or the published version names it', async () => {
    const cred = (
      await server.api('POST', '/api/v1/credentials', {
        name: 'in use',
        type: 'bearer',
        data: { token: 'abcd-1234' },
      })
    ).body;
    const wf = await createActiveWorkflow(server, {
      name: `in-use-${dialect}`,
      trigger: { path: `in-use-${dialect}` },
      steps: [httpStep('call', `${receiver.url}/x`, cred.id)],
    });
    const refused = await server.api('DELETE', `/api/v1/credentials/${cred.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('credential_in_use');
    expect(refused.body.message).toContain(`in-use-${dialect}`);
    expect(refused.body.message).toContain('/steps/0/credential');

    // The draft no longer names it, the published version still does.
    const saved = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      steps: [{ name: 'call', type: 'set', fields: { a: 1 } }],
    });
    expect(saved.status).toBe(200);
    const stillPublished = await server.api('DELETE', `/api/v1/credentials/${cred.id}`);
    expect(stillPublished.status).toBe(409);
    expect(stillPublished.body.message).toContain('published version');

    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/publish`)).status).toBe(200);
    expect((await server.api('DELETE', `/api/v1/credentials/${cred.id}`)).status).toBe(204);

    // Restoring the version that named it is refused now, naming the field.
    const restore = await server.api('POST', `/api/v1/workflows/${wf.id}/versions/1/restore`);
    expect(restore.status).toBe(400);
    expect(restore.body.fields).toContainEqual(expect.objectContaining({ field: '/steps/0/credential' }));
  });

  it('lists the credential routes in the OpenAPI document', async () => {
    const doc = await server.api('GET', '/api/v1/openapi.json');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/credentials', '/api/v1/credentials/{id}']),
    );
    expect(Object.keys(doc.body.paths['/api/v1/credentials/{id}']).sort()).toEqual([
      'delete',
      'get',
      'patch',
    ]);
  });

  it('a draft without a credential it names cannot be created by a plain create either', async () => {
    // A workflow created without steps, then saved with a real credential: accepted.
    const cred = (
      await server.api('POST', '/api/v1/credentials', {
        name: 'ok',
        type: 'header',
        data: { name: 'X-K', value: 'abcd-9999' },
      })
    ).body;
    const wf = await createWorkflow(server, { name: `ok-${dialect}` });
    const put = await server.api('PUT', `/api/v1/workflows/${wf.id}`, {
      name: `ok-${dialect}`,
      steps: [httpStep('call', `${receiver.url}/x`, cred.id)],
    });
    expect(put.status).toBe(200);
    expect(put.body.steps[0].credential).toBe(cred.id);
  });
});
