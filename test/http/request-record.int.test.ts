/**
 * The `http` step's record of the request it sent (SPEC 7c), against a real server and a local
 * receiver: method, URL, headers, content type and body as sent, with a credential's value and a
 * `$secrets` value "***" wherever they went (header, query, JSON body, form body, text body), and
 * neither anywhere in the execution's record or in the database rows that hold it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

const CREDENTIAL = 'cred-SECRET-in-header-8d1f';
const VARIABLE = 'var-SECRET-in-body-2c7e';

let server: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const bodies: string[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
});

afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((r) => receiver?.close(() => r()) ?? r());
});

describe('the request an http step records', () => {
  it('has method, URL, headers, content type and body as sent, secrets as "***", and no secret anywhere', async () => {
    const cred = await server.api('POST', '/api/v1/credentials', {
      name: 'Orders API',
      type: 'header',
      data: { name: 'X-Api-Key', value: CREDENTIAL },
    });
    expect(cred.status).toBe(201);
    expect(
      (await server.api('PUT', '/api/v1/variables/SIGNING', { value: VARIABLE, secret: true })).status,
    ).toBe(201);
    const wf = await createActiveWorkflow(server, {
      name: 'request record',
      trigger: { path: 'request-record' },
      steps: [
        {
          name: 'json',
          type: 'http',
          method: 'POST',
          url: `${receiverUrl}/orders?page=2`,
          credential: cred.body.id,
          headers: { 'X-Trace': 'abc' },
          body: { order: '{{ body.order }}', signature: '{{ $secrets.SIGNING }}' },
          idempotencyKey: false,
        },
        {
          name: 'form',
          type: 'http',
          method: 'PUT',
          url: `${receiverUrl}/form`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: { key: '{{ $secrets.SIGNING }}', n: 1 },
        },
        {
          name: 'text',
          type: 'http',
          method: 'POST',
          url: `${receiverUrl}/text`,
          body: '{{ "sig=" & $secrets.SIGNING }}',
          idempotencyKey: false,
        },
        { name: 'get', type: 'http', url: `${receiverUrl}/plain` },
      ],
    });

    const res = await fetch(`${server.url}/webhook/request-record`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order: 42 }),
    });
    expect(res.status).toBe(200);
    const { executionId } = (await res.json()) as { executionId: string };
    const execution = await finishedExecution(server, executionId);
    expect(execution.status).toBe('succeeded');
    // The receiver got the secrets themselves.
    expect(bodies).toContain(JSON.stringify({ order: 42, signature: VARIABLE }));
    expect(bodies).toContain(`key=${VARIABLE}&n=1`);

    const [json, form, text, get] = execution.steps;
    expect(json.request).toEqual({
      method: 'POST',
      url: `${receiverUrl}/orders?page=2`,
      headers: {
        'user-agent': 'hookflow',
        'x-trace': 'abc',
        'x-api-key': '***',
        'content-type': 'application/json',
      },
      contentType: 'application/json',
      body: JSON.stringify({ order: 42, signature: '***' }),
    });
    expect(form.request).toMatchObject({
      method: 'PUT',
      contentType: 'application/x-www-form-urlencoded',
      body: 'key=***&n=1',
    });
    expect(text.request).toMatchObject({ contentType: 'text/plain; charset=utf-8', body: 'sig=***' });
    // No body, no content type.
    expect(get.request).toEqual({
      method: 'GET',
      url: `${receiverUrl}/plain`,
      headers: { 'user-agent': 'hookflow' },
    });

    const record = JSON.stringify(execution);
    for (const secret of [CREDENTIAL, VARIABLE]) {
      expect(record.includes(secret), `the execution holds ${secret}`).toBe(false);
      expect(record.includes(encodeURIComponent(secret))).toBe(false);
    }
    const rows = await server.hookflow.store.db
      .selectFrom('executions')
      .selectAll()
      .where('workflow_id', '=', wf.id)
      .execute();
    expect(rows).toHaveLength(1);
    for (const secret of [CREDENTIAL, VARIABLE])
      expect(JSON.stringify(rows).includes(secret), `the stored row holds ${secret}`).toBe(false);
  });
});
