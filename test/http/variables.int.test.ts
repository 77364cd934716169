/**
 * Variables and secrets (SPEC 7e) over HTTP: the API (names, secret values write-only, audit rows
 * without values), `$vars` in any expression, `$secrets` refused on save outside the fields that
 * send it, and a secret Slack-style incoming-webhook URL that reaches its receiver and appears
 * nowhere else: not in the execution records (the request's URL, an error that names the URL,
 * forEach iterations, a response that echoes it), the API's answers, the data dir's files or the
 * server's log.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import {
  createActiveWorkflow,
  createWorkflow,
  json,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

describe('the variables API', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates (201), replaces (200), reads, lists and deletes a variable', async () => {
    const created = await server.api('PUT', '/api/v1/variables/API_BASE', {
      value: 'https://api.example.com',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'API_BASE', value: 'https://api.example.com', secret: false });
    const replaced = await server.api('PUT', '/api/v1/variables/API_BASE', {
      value: 'https://api.example.org',
      secret: false,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.createdAt).toBe(created.body.createdAt);
    expect((await server.api('GET', '/api/v1/variables/API_BASE')).body.value).toBe(
      'https://api.example.org',
    );
    const list = await server.api('GET', '/api/v1/variables');
    expect(list.status).toBe(200);
    expect(list.body.items.map((v: { name: string }) => v.name)).toContain('API_BASE');
    expect((await server.api('DELETE', '/api/v1/variables/API_BASE')).status).toBe(204);
    const gone = await server.api('GET', '/api/v1/variables/API_BASE');
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
    expect((await server.api('DELETE', '/api/v1/variables/API_BASE')).status).toBe(404);
  });

  it.each(['lower', '1ST', 'WITH-DASH', 'SPACE X'])('refuses the name %s with 400', async (name) => {
    const res = await server.api('PUT', `/api/v1/variables/${encodeURIComponent(name)}`, { value: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('shows a secret value as *** everywhere, keeps it when *** is sent back, and audits without values', async () => {
    const value = 'sk_live_never_shown_4242';
    const put = await server.api('PUT', '/api/v1/variables/STRIPE_KEY', { value, secret: true });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ name: 'STRIPE_KEY', value: '***', secret: true });
    expect((await server.api('GET', '/api/v1/variables/STRIPE_KEY')).body.value).toBe('***');
    const list = await server.api('GET', '/api/v1/variables');
    expect(JSON.stringify(list.body)).not.toContain(value);
    // Sent back as shown: the value is kept (a form that changes nothing else).
    expect(
      (await server.api('PUT', '/api/v1/variables/STRIPE_KEY', { value: '***', secret: true })).status,
    ).toBe(200);
    const row = await server.hookflow.store.db
      .selectFrom('variables')
      .selectAll()
      .where('name', '=', 'STRIPE_KEY')
      .executeTakeFirstOrThrow();
    expect(row.value).not.toContain(value);
    expect(JSON.stringify(row)).not.toContain(value);
    // Made plain again without its value: refused, as the value cannot be shown.
    const plain = await server.api('PUT', '/api/v1/variables/STRIPE_KEY', { value: '***', secret: false });
    expect(plain.status).toBe(400);

    expect((await server.api('DELETE', '/api/v1/variables/STRIPE_KEY')).status).toBe(204);
    const audit = await server.api('GET', '/api/v1/audit?limit=20');
    const rows = audit.body.items.filter((i: { target: { type: string } }) => i.target.type === 'variable');
    expect(rows.map((r: { action: string; target: { name: string } }) => [r.action, r.target.name])).toEqual(
      expect.arrayContaining([
        ['variable.set', 'STRIPE_KEY'],
        ['variable.delete', 'STRIPE_KEY'],
      ]),
    );
    expect(JSON.stringify(audit.body)).not.toContain(value);
  });

  it('gives $vars to any expression, and refuses $secrets outside the fields that send it (400 naming the field)', async () => {
    await server.api('PUT', '/api/v1/variables/GREETING', { value: 'hello' });
    await server.api('PUT', '/api/v1/variables/TOKEN', { value: 'tok-123456', secret: true });
    const wf = await createActiveWorkflow(server, {
      name: 'vars',
      trigger: { path: 'vars', response: { mode: 'lastStep' } },
      steps: [
        {
          name: 'shape',
          type: 'set',
          fields: { text: '{{ $vars.GREETING & " " & body.who }}', secret: '{{ $vars.TOKEN }}' },
        },
      ],
    });
    const res = await fetch(`${server.url}/webhook/vars`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ who: 'world' }),
    });
    // A secret is not in $vars: only $secrets has it, where it may go.
    const out = await json(res);
    expect(out.text).toBe('hello world');
    expect(out.secret ?? null).toBeNull();
    expect(wf.id).toBeTruthy();

    for (const [steps, field] of [
      [[{ name: 's', type: 'set', fields: { leak: '{{ $secrets.TOKEN }}' } }], '/steps/0/fields/leak'],
      [[{ name: 'if', type: 'if', condition: '{{ $secrets.TOKEN = "x" }}', then: [] }], '/steps/0/condition'],
      [
        [{ name: 'r', type: 'respond', body: { token: '{{ $lookup($secrets, "TOKEN") }}' } }],
        '/steps/0/body/token',
      ],
      [
        [{ name: 'h', type: 'http', url: 'https://example.com', timeoutMs: '{{ $number($secrets.TOKEN) }}' }],
        '/steps/0/timeoutMs',
      ],
    ] as const) {
      const refused = await server.api('POST', '/api/v1/workflows', {
        name: 'leak',
        trigger: { path: 'leak' },
        steps,
      });
      expect(refused.status, JSON.stringify(steps)).toBe(400);
      expect(refused.body.code).toBe('validation_failed');
      expect(JSON.stringify(refused.body)).toContain(field);
      expect(JSON.stringify(refused.body)).toContain('$secrets');
    }
    // Allowed where the http step sends it.
    await createWorkflow(server, {
      name: 'allowed',
      trigger: { path: 'allowed' },
      steps: [
        {
          name: 'call',
          type: 'http',
          method: 'POST',
          url: 'https://example.com/{{ $secrets.TOKEN }}',
          headers: { 'x-api-key': '{{ $secrets.TOKEN }}' },
          query: { key: '{{ $secrets.TOKEN }}' },
          body: { token: '{{ $secrets.TOKEN }}' },
        },
      ],
    });
  });
});

describe('a secret incoming-webhook URL (a hookflow process)', () => {
  /** The secret path of a Slack-style incoming-webhook URL. */
  const SECRET = 'T0AAA1111/B0BBB2222/XyZ9secretWebhookToken77';
  let receiver: http.Server;
  let receiverUrl: string;
  const received: { path: string; body: string }[] = [];
  let server: ServerProcess;
  let dataDir: string;
  let headers: Record<string, string>;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        // Like many APIs, it echoes what it got: the URL in a JSON answer, or in a 404's text.
        if (req.url?.includes('/missing/'))
          return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no such hook: ${req.url}`);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ok: true, url: req.url }));
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    dataDir = tempDir();
    const env = {
      HOOKFLOW_DATA_DIR: dataDir,
      HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
      // Everything the server says, requests included.
      HOOKFLOW_LOG_LEVEL: 'debug',
    };
    const token = (await runCli(['tokens', 'create', '--name', 'secrets'], env)).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    server = await startServerProcess(env);
  }, 60_000);
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    receiver?.closeAllConnections();
    await new Promise<void>((r) => receiver?.close(() => r()) ?? r());
  });

  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}${route}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };

  it('posts to the URL and shows *** in every record, answer, file and log line', async () => {
    expect(
      (
        await api('PUT', '/api/v1/variables/SLACK_WEBHOOK_URL', {
          value: `${receiverUrl}/services/${SECRET}`,
          secret: true,
        })
      ).status,
    ).toBe(201);
    expect((await api('PUT', '/api/v1/variables/SLACK_PATH', { value: SECRET, secret: true })).status).toBe(
      201,
    );
    const created = JSON.parse(
      (
        await api('POST', '/api/v1/workflows', {
          name: 'notify',
          trigger: { path: 'notify', response: { mode: 'lastStep' } },
          steps: [
            {
              name: 'post',
              type: 'http',
              method: 'POST',
              url: '{{ $secrets.SLACK_WEBHOOK_URL }}',
              body: { text: '{{ "New order " & body.order }}' },
            },
            {
              name: 'each',
              type: 'forEach',
              items: '{{ $trigger.body.lines }}',
              steps: [
                {
                  name: 'line',
                  type: 'http',
                  method: 'POST',
                  url: '{{ $secrets.SLACK_WEBHOOK_URL }}',
                  headers: { 'x-hook': '{{ $secrets.SLACK_PATH }}' },
                  body: { text: '{{ $item }}' },
                },
              ],
            },
            {
              name: 'missing',
              type: 'http',
              method: 'POST',
              url: '{{ "' + receiverUrl + '/missing/" & $secrets.SLACK_PATH }}',
              body: { text: 'x' },
            },
          ],
        })
      ).text,
    );
    expect((await api('POST', `/api/v1/workflows/${created.id}/activate`)).status).toBe(200);

    const res = await fetch(`${server.url}/webhook/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order: 42, lines: ['a', 'b'] }),
    });
    const answer = await res.text();
    const executionId = res.headers.get('x-hookflow-execution-id')!;
    // The receiver got the secret URL, three times, and the failing call.
    expect(received.filter((r) => r.path === `/services/${SECRET}`)).toHaveLength(3);
    expect(received.some((r) => r.path === `/missing/${SECRET}`)).toBe(true);

    const execution = await api('GET', `/api/v1/executions/${executionId}`);
    const record = JSON.parse(execution.text);
    expect(record.status).toBe('failed');
    expect(record.steps[0].request.url).toBe('***');
    expect(record.steps[0].output.body.url).toBe('/services/***');
    expect(record.steps[1].iterations[0].steps[0].request.headers['x-hook']).toBe('***');
    expect(record.error.message).toContain('/missing/***');
    const list = await api('GET', `/api/v1/executions?workflowId=${created.id}`);
    for (const [label, text] of [
      ['the webhook answer', answer],
      ['the execution', execution.text],
      ['the executions list', list.text],
      ['the variables', (await api('GET', '/api/v1/variables')).text],
    ])
      expect(text!.includes(SECRET), `${label} holds the secret`).toBe(false);

    // Nothing on disk holds it in clear: the database (its WAL too), files, keys.
    const files = fs.readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = fs.readFileSync(path.join(file.parentPath, file.name));
      expect(bytes.includes(Buffer.from(SECRET)), `${file.name} holds the secret`).toBe(false);
      expect(bytes.includes(Buffer.from(SECRET, 'utf16le')), `${file.name} holds the secret`).toBe(false);
    }
    // Nor the server's log (debug level).
    expect(server.output().length).toBeGreaterThan(0);
    expect(server.output().includes(SECRET)).toBe(false);
  }, 60_000);
});
