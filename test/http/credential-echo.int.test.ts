/**
 * A remote API that echoes a credential back, in a form other than the one sent, must not put it
 * into the execution record or the `lastStep` answer (SPEC 7c): in a binary body (stored base64),
 * URL-decoded with `+` for spaces, or percent-encoded with lower-case hex. Over real HTTP: a local
 * server stands in for the API, a webhook in lastStep mode calls it through an `http` step.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

/** Spaces and reserved characters, so that each encoding differs from the clear value. */
const SECRET = 'key with/spaces&and=SECRET-9d41';
const lowerHex = encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase());
const formEncoded = new URLSearchParams({ v: SECRET }).toString().slice(2);
/** Every form the secret is echoed in below: none may be found anywhere. */
const FORMS = [SECRET, lowerHex, formEncoded, encodeURIComponent(SECRET)];

/** How the remote API echoes the header it got, by path. */
const ECHOES: Record<string, (got: string) => { type: string; body: Buffer }> = {
  // Binary: the http step stores it base64.
  '/octet': (got) => ({
    type: 'application/octet-stream',
    body: Buffer.concat([Buffer.from([0, 255, 7]), Buffer.from(`key=${got};`), Buffer.from([254])]),
  }),
  // URL-decoded form encoding: spaces as `+`.
  '/form': (got) => ({
    type: 'application/x-www-form-urlencoded',
    body: Buffer.from(`echo=${new URLSearchParams({ v: got }).toString().slice(2)}&ok=1`),
  }),
  // Lower-case hex escapes, inside JSON.
  '/lower-hex': (got) => ({
    type: 'application/json',
    body: Buffer.from(
      JSON.stringify({ echo: encodeURIComponent(got).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()) }),
    ),
  }),
};

let server: TestServer;
let remote: http.Server;
let remoteUrl: string;
let credentialId: string;

beforeAll(async () => {
  remote = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const echo = ECHOES[new URL(req.url ?? '/', 'http://x').pathname];
      if (!echo) return void res.writeHead(404).end();
      const got = String(req.headers['x-api-key']);
      const { type, body } = echo(got);
      res.writeHead(200, { 'content-type': type }).end(body);
    });
  });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
  server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  const cred = await server.api('POST', '/api/v1/credentials', {
    name: 'echoed',
    type: 'header',
    data: { name: 'X-Api-Key', value: SECRET },
  });
  expect(cred.status).toBe(201);
  credentialId = cred.body.id;
});
afterAll(async () => {
  await server?.close();
  remote?.closeAllConnections();
  await new Promise<void>((r) => remote?.close(() => r()) ?? r());
});

const expectNoSecret = (text: string, label: string) => {
  for (const form of FORMS) expect(text.includes(form), `${label} holds ${form}`).toBe(false);
};

describe('a credential echoed back by the remote API', () => {
  it.each([
    ['in an application/octet-stream body (stored base64)', '/octet'],
    ['URL-decoded, with + for spaces', '/form'],
    ['with lower-case hex escapes', '/lower-hex'],
  ])('is masked %s, in the record and in the lastStep answer', async (_name, echoPath) => {
    const path = `echo${echoPath.replace('/', '-')}`;
    await createActiveWorkflow(server, {
      name: path,
      trigger: { path, response: { mode: 'lastStep' } },
      steps: [
        {
          name: 'call',
          type: 'http',
          method: 'GET',
          url: `${remoteUrl}${echoPath}`,
          credential: credentialId,
        },
      ],
    });
    const res = await fetch(`${server.url}/webhook/${path}`, { method: 'POST' });
    const answer = await res.text();
    expect(res.status).toBe(200);
    const record = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(record.status).toBe('succeeded');
    const output = record.steps[0].output;

    // The body as the step kept it: a base64 body decoded to the bytes it stands for.
    const body =
      output.bodyEncoding === 'base64'
        ? Buffer.from(output.body, 'base64').toString('latin1')
        : JSON.stringify(output.body);
    expect(body).toContain('***');
    expectNoSecret(body, 'step output body');
    expectNoSecret(JSON.stringify(record), 'execution record');
    expect(JSON.parse(answer)).toEqual(output);
    expectNoSecret(answer, 'lastStep answer');
    if (output.bodyEncoding === 'base64') {
      // The binary around the secret is kept byte for byte.
      expect(Buffer.from(output.body, 'base64')).toEqual(
        Buffer.concat([Buffer.from([0, 255, 7]), Buffer.from('key=***;'), Buffer.from([254])]),
      );
    }
  });
});
