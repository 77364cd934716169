/**
 * Idempotency keys on outbound calls (SPEC 7d), over real HTTP against a local receiver that logs
 * the headers of every request and answers from a script: a POST sends
 * `Idempotency-Key: <executionId>.<step name>`, the same on every attempt (retries with backoff,
 * and a retry parked as `waiting` and resumed), one per iteration inside `forEach` loops; `false`,
 * a GET, a renamed header, a header the step sets itself; and a retried execution sends a new key.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  headers?: Record<string, string>;
}

/** path -> what the receiver answers to its 1st, 2nd … request (the last one repeats). */
const scripts = new Map<string, Answer[]>();
/** path -> the headers of each request to it, in order. */
const seen = new Map<string, http.IncomingHttpHeaders[]>();
let receiver: http.Server;
let receiverUrl = '';
let server: TestServer;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const list = seen.get(path) ?? [];
    list.push(req.headers);
    seen.set(path, list);
    const script = scripts.get(path) ?? [{ status: 200 }];
    const answer = script[Math.min(list.length - 1, script.length - 1)]!;
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
});

afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

/** An active workflow at `/webhook/<path>` with `steps`; returns a function that fires it and waits for the execution. */
async function workflow(path: string, steps: unknown[]) {
  await createActiveWorkflow(server, { name: path, trigger: { path }, steps });
  // biome-ignore lint/suspicious/noExplicitAny: JSON from the API
  return async (body: unknown = {}): Promise<any> => {
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const { executionId } = (await res.json()) as { executionId: string };
    return finishedExecution(server, executionId, 15_000);
  };
}

const call = (path: string, more: Record<string, unknown> = {}) => ({
  name: 'call',
  type: 'http',
  method: 'POST',
  url: `${receiverUrl}/${path}`,
  body: { hello: 'world' },
  ...more,
});

const keys = (path: string, header = 'idempotency-key') => (seen.get(`/${path}`) ?? []).map((h) => h[header]);

describe('Idempotency-Key on http steps (SPEC 7d)', () => {
  it('a POST sends <executionId>.<step name>, and the record shows it', async () => {
    const fire = await workflow('plain', [call('plain')]);
    const execution = await fire();
    expect(execution.status).toBe('succeeded');
    expect(keys('plain')).toEqual([`${execution.id}.call`]);
    expect(execution.steps[0].request.headers['idempotency-key']).toBe(`${execution.id}.call`);
    // Another execution of the same step: another key.
    const again = await fire();
    expect(keys('plain')).toEqual([`${execution.id}.call`, `${again.id}.call`]);
  });

  it('is the same on every attempt: 503 twice then 200', async () => {
    scripts.set('/flaky', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const fire = await workflow('flaky', [call('flaky', { retry: { attempts: 3, backoffMs: 50 } })]);
    const execution = await fire();
    expect(execution.status).toBe('succeeded');
    expect(execution.steps[0].attempts.map((a: { status: number }) => a.status)).toEqual([503, 503, 200]);
    expect(keys('flaky')).toEqual(Array(3).fill(`${execution.id}.call`));
  });

  it('is the same after a retry pause parked the execution as waiting and it resumed', async () => {
    // Retry-After: 1 is a pause of a second: the execution parks, and the next attempt runs from its checkpoint.
    scripts.set('/parked', [{ status: 503, headers: { 'retry-after': '1' } }, { status: 200 }]);
    const fire = await workflow('parked', [
      { name: 'before', type: 'set', fields: { n: 1 } },
      call('parked', { retry: { attempts: 2 } }),
    ]);
    const execution = await fire();
    expect(execution.status).toBe('succeeded');
    expect(execution.steps[1].attempts.map((a: { status: number }) => a.status)).toEqual([503, 200]);
    expect(keys('parked')).toEqual(Array(2).fill(`${execution.id}.call`));
  });

  it('inside forEach: one key per iteration, ending in its index; nested loops add one index each, outermost first', async () => {
    const fire = await workflow('loop', [
      { name: 'each', type: 'forEach', items: '{{ body.items }}', steps: [call('loop')] },
    ]);
    const execution = await fire({ items: ['a', 'b', 'c'] });
    expect(execution.status).toBe('succeeded');
    expect(keys('loop')).toEqual([0, 1, 2].map((i) => `${execution.id}.call.${i}`));

    const nested = await workflow('nested', [
      {
        name: 'rows',
        type: 'forEach',
        items: '{{ body.rows }}',
        steps: [{ name: 'cells', type: 'forEach', items: '{{ $item }}', steps: [call('nested')] }],
      },
      // After the loops: no index again.
      call('nested', { name: 'after' }),
    ]);
    const run = await nested({ rows: [['a', 'b'], ['c']] });
    expect(run.status).toBe('succeeded');
    expect(keys('nested')).toEqual([
      `${run.id}.call.0.0`,
      `${run.id}.call.0.1`,
      `${run.id}.call.1.0`,
      `${run.id}.after`,
    ]);
  });

  it('PATCH sends one; GET and PUT send none; `false` turns it off', async () => {
    const fire = await workflow('methods', [
      call('methods', { name: 'patch', method: 'PATCH' }),
      call('methods', { name: 'get', method: 'GET', body: undefined }),
      call('methods', { name: 'put', method: 'PUT' }),
      call('methods', { name: 'off', idempotencyKey: false }),
    ]);
    const execution = await fire();
    expect(execution.status).toBe('succeeded');
    expect(keys('methods')).toEqual([`${execution.id}.patch`, undefined, undefined, undefined]);
    expect(execution.steps[3].request.headers).not.toHaveProperty('idempotency-key');
  });

  it('{header} renames it; a header of that name the step sets itself is sent as written', async () => {
    const fire = await workflow('renamed', [
      call('renamed', { name: 'renamed', idempotencyKey: { header: 'X-Request-Key' } }),
      call('renamed', { name: 'own', headers: { 'Idempotency-Key': 'order-{{ $trigger.body.order }}' } }),
    ]);
    const execution = await fire({ order: 42 });
    expect(execution.status).toBe('succeeded');
    expect(keys('renamed', 'x-request-key')).toEqual([`${execution.id}.renamed`, undefined]);
    expect(keys('renamed')).toEqual([undefined, 'order-42']);
  });

  it('a retried execution is a new execution, with a new key', async () => {
    scripts.set('/retried', [{ status: 500 }, { status: 200 }]);
    const fire = await workflow('retried', [call('retried')]);
    const first = await fire();
    expect(first.status).toBe('failed');
    const res = await server.api('POST', `/api/v1/executions/${first.id}/retry`);
    expect(res.status).toBe(202);
    const second = await finishedExecution(server, res.body.executionId, 15_000);
    expect(second.status).toBe('succeeded');
    expect(second.id).not.toBe(first.id);
    expect(keys('retried')).toEqual([`${first.id}.call`, `${second.id}.call`]);
  });

  it.each([
    ['a header name that is not one', { header: 'X Request Key' }],
    ['a framing header', { header: 'Content-Length' }],
    ['Host', { header: 'host' }],
    ['another field', { header: 'X-Key', value: 'v' }],
    ['a string', 'yes'],
  ])('refuses %s on save', async (_case, idempotencyKey) => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'bad',
      trigger: { path: 'bad-key' },
      steps: [call('bad', { idempotencyKey })],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(JSON.stringify(res.body)).toContain('idempotencyKey');
  });
});
