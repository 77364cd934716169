/**
 * What a webhook caller (anyone on the internet) may learn from an answer, over real HTTP (issue 14,
 * findings 4, 6 and 7):
 * - a failed execution answers `execution_failed` with its id and a generic message: the step's
 *   error (URLs with secret paths, internal host names and addresses) stays in the execution record;
 * - every answer with a body is sandboxed (`Content-Security-Policy: sandbox …`, `nosniff`), so an
 *   HTML page built from request data cannot run script on the UI's origin; a trigger may opt out;
 * - a respond-step header Node would refuse fails the step, so the answer and the record agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution, FORM } from '../engine/int-helpers.js';
import { createActiveWorkflow, createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

// A Slack-style incoming-webhook URL: its path is the secret. The host is loopback, which the
// outbound guard refuses (private networks are not allowed on this server), naming host and address.
const SECRET_PATH = '/services/T0SECRET/B0SECRET/xoxbSecretPath';
const INTERNAL_URL = `http://localhost:9${SECRET_PATH}`;
const LEAKS = [
  'localhost',
  '127.0.0.1',
  'T0SECRET',
  'xoxbSecretPath',
  'services/',
  'loopback',
  'PRIVATE_NETWORK',
];

const post = (path: string, body: string, headers: Record<string, string> = FORM) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers, body });

const failingCall = { name: 'notify', type: 'http', method: 'POST', url: INTERNAL_URL, body: { a: 1 } };

beforeAll(async () => {
  server = await startTestServer();
  await createActiveWorkflow(server, {
    name: 'leak-last',
    trigger: { path: 'leak-last', response: { mode: 'lastStep' } },
    steps: [failingCall],
  });
  await createActiveWorkflow(server, {
    name: 'leak-respond',
    trigger: { path: 'leak-respond', response: { mode: 'respondStep' } },
    steps: [failingCall, { name: 'answer', type: 'respond', body: { ok: true } }],
  });
  await createActiveWorkflow(server, {
    name: 'leak-expression',
    trigger: { path: 'leak-expression', response: { mode: 'respondStep' } },
    steps: [
      {
        name: 'answer',
        type: 'respond',
        body: { x: '{{ $error("db.internal:5432 refused user " & body.who) }}' },
      },
    ],
  });
  await createActiveWorkflow(server, {
    name: 'html',
    trigger: { path: 'html', response: { mode: 'respondStep' } },
    steps: [
      {
        name: 'page',
        type: 'respond',
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<p>Hello {{ body.name }}</p>',
      },
    ],
  });
  await createActiveWorkflow(server, {
    name: 'html-own-csp',
    trigger: { path: 'html-own-csp', response: { mode: 'respondStep' } },
    steps: [
      {
        name: 'page',
        type: 'respond',
        headers: { 'content-type': 'text/html', 'content-security-policy': "default-src 'none'" },
        body: '<p>hi</p>',
      },
    ],
  });
  await createActiveWorkflow(server, {
    name: 'html-open',
    trigger: { path: 'html-open', response: { mode: 'respondStep', sandbox: false } },
    steps: [
      {
        name: 'page',
        type: 'respond',
        headers: { 'content-type': 'text/html' },
        body: '<p>Hello {{ body.name }}</p>',
      },
    ],
  });
  await createActiveWorkflow(server, {
    name: 'header',
    trigger: { path: 'header', response: { mode: 'respondStep' } },
    steps: [
      { name: 'answer', type: 'respond', headers: { 'x-name': '{{ body.name }}' }, body: { ok: true } },
    ],
  });
});

afterAll(async () => {
  await server?.close();
});

/** The answer of a failed execution: generic, with the id; nothing of the step's error. */
async function expectGenericFailure(res: Response): Promise<string> {
  const text = await res.text();
  expect(res.status).toBe(500);
  const executionId = res.headers.get('x-hookflow-execution-id');
  expect(executionId).toBeTruthy();
  const body = JSON.parse(text);
  expect(body).toMatchObject({ code: 'execution_failed', executionId, message: 'The workflow failed.' });
  for (const leak of LEAKS) expect(text).not.toContain(leak);
  return executionId!;
}

describe('a failed execution answers its caller without its error', () => {
  it('lastStep: a refused http step answers execution_failed; the record keeps the detail', async () => {
    const executionId = await expectGenericFailure(await post('/webhook/leak-last', 'a=1'));
    const execution = await finishedExecution(server, executionId);
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ step: 'notify', field: '/url' });
    expect(execution.error.message).toContain('localhost');
    expect(execution.error.message).toContain('127.0.0.1');
  });

  it('respondStep: failing before the respond step answers the same way', async () => {
    const executionId = await expectGenericFailure(await post('/webhook/leak-respond', 'a=1'));
    expect((await finishedExecution(server, executionId)).error.message).toContain('localhost');
  });

  it('a failing expression in the respond step answers the same way', async () => {
    const res = await post('/webhook/leak-expression', 'who=mallory');
    const executionId = await expectGenericFailure(res);
    const execution = await finishedExecution(server, executionId);
    expect(execution.error).toMatchObject({ step: 'answer' });
    expect(execution.error.message).toContain('db.internal:5432');
  });

  it('a test-mode call answers like production', async () => {
    const wf = await createWorkflow(server, {
      name: 'leak-test',
      trigger: { path: 'leak-test', response: { mode: 'lastStep' } },
      steps: [failingCall],
    });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {})).status).toBe(201);
    const executionId = await expectGenericFailure(await post('/webhook-test/leak-test', 'a=1'));
    expect((await finishedExecution(server, executionId)).error.message).toContain('127.0.0.1');
  });
});

describe('webhook answers are sandboxed', () => {
  const sandboxOf = (res: Response) => res.headers.get('content-security-policy') ?? '';

  it('an HTML page from a respond step gets CSP sandbox (an opaque origin) and nosniff', async () => {
    const res = await post('/webhook/html', `name=${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('<p>Hello <script>alert(1)</script></p>');
    const csp = sandboxOf(res);
    expect(csp).toMatch(/^sandbox /);
    expect(csp).toContain('allow-scripts');
    // Without allow-same-origin the page runs in an opaque origin: no cookies, no CSRF token, no API.
    expect(csp).not.toContain('allow-same-origin');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("keeps the sandbox beside a respond step's own policy (both are enforced)", async () => {
    const res = await post('/webhook/html-own-csp', 'a=1');
    const csp = sandboxOf(res);
    expect(csp).toMatch(/^sandbox [^,]*, default-src 'none'$/);
  });

  it('trigger.response.sandbox: false serves the page without the sandbox', async () => {
    const res = await post('/webhook/html-open', 'name=x');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<p>Hello x</p>');
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("hookflow's own answers (immediately, errors) get the strictest sandbox: nothing allowed", async () => {
    await createActiveWorkflow(server, { name: 'plain', trigger: { path: 'plain' }, steps: [] });
    for (const res of [await post('/webhook/plain', 'a=1'), await post('/webhook/nowhere', 'a=1')]) {
      expect(sandboxOf(res)).toBe('sandbox');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('an owner-set immediately body keeps the page sandbox; opting out removes it', async () => {
    await createActiveWorkflow(server, {
      name: 'owner-body',
      trigger: { path: 'owner-body', response: { mode: 'immediately', body: '<p>Thanks</p>' } },
      steps: [],
    });
    const res = await post('/webhook/owner-body', 'a=1');
    expect(await res.text()).toBe('<p>Thanks</p>');
    expect(sandboxOf(res)).toMatch(/^sandbox .*allow-scripts/);
    await createActiveWorkflow(server, {
      name: 'plain-open',
      trigger: { path: 'plain-open', response: { mode: 'immediately', sandbox: false } },
      steps: [],
    });
    const open = await post('/webhook/plain-open', 'a=1');
    expect(open.status).toBe(200);
    expect(open.headers.get('content-security-policy')).toBeNull();
  });

  it('refuses a sandbox option that is not a boolean', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'bad-sandbox',
      trigger: { path: 'bad-sandbox', response: { mode: 'respondStep', sandbox: 'no' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

describe('respond-step headers follow the rules Node applies', () => {
  it('a value outside Latin-1 fails the step: the answer and the record agree', async () => {
    const res = await post('/webhook/header', `name=${encodeURIComponent('Ā')}`);
    const executionId = await expectGenericFailure(res);
    const execution = await finishedExecution(server, executionId);
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ step: 'answer', field: '/headers/x-name' });
    expect(execution.error.message).toMatch(/header "x-name".*U\+0100/);
  });

  it('a Latin-1 value fails the step too: Node would send it as UTF-8 or Latin-1 bytes', async () => {
    const res = await post('/webhook/header', `name=${encodeURIComponent('café')}`);
    const executionId = await expectGenericFailure(res);
    const execution = await finishedExecution(server, executionId);
    expect(execution.error.message).toMatch(/header "x-name" contains a character outside ASCII \(U\+00E9/);
  });

  it('an ASCII value is sent as it is', async () => {
    const res = await post('/webhook/header', `name=${encodeURIComponent('cafe au lait')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-name')).toBe('cafe au lait');
  });

  it('a literal value Node would refuse is refused when the workflow is saved', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'bad-header',
      trigger: { path: 'bad-header', response: { mode: 'respondStep' } },
      steps: [{ name: 'answer', type: 'respond', headers: { 'x-name': 'Ā' } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.fields[0].field).toBe('/steps/0/headers/x-name');
    expect(res.body.fields[0].message).toContain('U+0100');
  });
});
