import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NetworkPolicy, Outbound, publicNetworkOnly } from '../../../src/engine/network.js';
import { httpStep, idempotencyKeyOf, MAX_RESPONSE_BYTES } from '../../../src/engine/steps/http.js';
import { StepFailure } from '../../../src/engine/steps/types.js';
import { stepContext } from './helpers.js';

let server: http.Server;
let base: string;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      switch (url.pathname) {
        case '/echo':
          res.setHeader('content-type', 'application/json');
          res.setHeader('x-served-by', 'test');
          res.end(
            JSON.stringify({
              method: req.method,
              path: url.pathname,
              query: url.search,
              headers: req.headers,
              body,
            }),
          );
          return;
        case '/text':
          res.setHeader('content-type', 'text/plain');
          res.end('hello');
          return;
        case '/bytes':
          res.setHeader('content-type', 'application/octet-stream');
          res.end(Buffer.from([0, 1, 2, 255]));
          return;
        case '/missing':
          res.statusCode = 404;
          res.setHeader('content-type', 'application/json');
          res.end('{"error":"no such thing"}');
          return;
        case '/broken-json':
          res.setHeader('content-type', 'application/json');
          res.end('{"a":');
          return;
        case '/slow':
          setTimeout(() => res.end('late'), 1_000);
          return;
        case '/big': {
          // No content-length: the cap must hold on the bytes streamed.
          const chunk = Buffer.alloc(64 * 1024, 97);
          let sent = 0;
          const write = () => {
            while (sent <= MAX_RESPONSE_BYTES) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', write);
            }
            res.end();
          };
          write();
          return;
        }
        case '/redirect':
          res.statusCode = Number(url.searchParams.get('status') ?? 302);
          res.setHeader('location', url.searchParams.get('to') ?? '/echo');
          res.end();
          return;
        case '/loop':
          res.statusCode = 302;
          res.setHeader('location', '/loop');
          res.end();
          return;
        default:
          res.statusCode = 500;
          res.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

// The http step always answers with a promise (StepType.run may also answer synchronously).
const run = (config: Parameters<typeof httpStep.run>[0], ctx = stepContext()) =>
  Promise.resolve(httpStep.run(config, ctx));
const failure = (config: Parameters<typeof httpStep.run>[0], ctx = stepContext()) =>
  run(config, ctx).then(
    () => {
      throw new Error('expected the step to fail');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(StepFailure);
      return err as StepFailure;
    },
  );

describe('http step', () => {
  it('sends a GET with query and headers and parses a JSON answer', async () => {
    const { output } = await run({
      method: 'GET',
      url: `${base}/echo?a=1`,
      query: { b: 'two', c: [1, 2], skip: null },
      headers: { 'X-Token': 'abc', 'x-n': 5 },
    });
    const out = output as { status: number; headers: Record<string, string>; body: Record<string, unknown> };
    expect(out.status).toBe(200);
    expect(out.headers['x-served-by']).toBe('test');
    expect(out.body.method).toBe('GET');
    expect(out.body.query).toBe('?a=1&b=two&c=1&c=2');
    expect(out.body.headers).toMatchObject({ 'x-token': 'abc', 'x-n': '5', 'user-agent': 'hookflow' });
  });

  it('sends an object body as JSON', async () => {
    const { output } = await run({ method: 'POST', url: `${base}/echo`, body: { a: [1, 'b'] } });
    const body = (output as { body: { headers: Record<string, string>; body: string } }).body;
    expect(body.headers['content-type']).toBe('application/json');
    expect(JSON.parse(body.body)).toEqual({ a: [1, 'b'] });
  });

  it('sends a form when the content type says so', async () => {
    const { output } = await run({
      method: 'POST',
      url: `${base}/echo`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: { a: 'x y', b: [1, 2] },
    });
    expect((output as { body: { body: string } }).body.body).toBe('a=x+y&b=1&b=2');
  });

  it('keeps text as text and other bytes as base64', async () => {
    expect((await run({ url: `${base}/text` })).output).toMatchObject({ status: 200, body: 'hello' });
    expect((await run({ url: `${base}/bytes` })).output).toMatchObject({
      body: 'AAEC/w==',
      bodyEncoding: 'base64',
    });
  });

  it('fails on a non-2xx answer by default, keeping the response on the step', async () => {
    const err = await failure({ url: `${base}/missing?key=secret` });
    expect(err.message).toBe(
      `GET ${base}/missing answered 404. Set failOnError: false to go on with non-2xx responses.`,
    );
    expect(err.output).toMatchObject({ status: 404, body: { error: 'no such thing' } });
  });

  it('passes a non-2xx answer on with failOnError: false', async () => {
    const { output } = await run({ url: `${base}/missing`, failOnError: false });
    expect(output).toMatchObject({ status: 404, body: { error: 'no such thing' } });
  });

  it('fails when a JSON answer does not parse', async () => {
    expect((await failure({ url: `${base}/broken-json` })).message).toMatch(/does not parse as JSON/);
  });

  it('gives up after timeoutMs', async () => {
    const started = Date.now();
    const err = await failure({ url: `${base}/slow`, timeoutMs: 100 });
    expect(err.message).toBe(`GET ${base}/slow did not answer within 100 ms.`);
    expect(err.field).toBe('/timeoutMs');
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('stops when the execution runs out of time', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await failure({ url: `${base}/slow` }, stepContext({}, { signal: controller.signal }));
    expect(err.message).toMatch(/execution ran out of time/);
  });

  it(`refuses a response body over ${MAX_RESPONSE_BYTES} bytes`, async () => {
    expect((await failure({ url: `${base}/big` })).message).toBe('The response body is larger than 5 MiB.');
  });

  it('follows redirects; a 302 after POST continues as GET without body', async () => {
    const { output } = await run({ method: 'POST', url: `${base}/redirect?to=/echo`, body: { a: 1 } });
    expect((output as { body: { method: string; body: string } }).body).toMatchObject({
      method: 'GET',
      body: '',
    });
  });

  it('keeps method and body through a 307', async () => {
    const { output } = await run({
      method: 'POST',
      url: `${base}/redirect?status=307&to=/echo`,
      body: { a: 1 },
    });
    expect((output as { body: { method: string; body: string } }).body).toMatchObject({
      method: 'POST',
      body: '{"a":1}',
    });
  });

  it('stops following an endless redirect', async () => {
    expect((await failure({ url: `${base}/loop` })).message).toMatch(/Gave up after 5 redirects/);
  });

  it.each([
    ['a GET with a body', { method: 'GET' as const, url: 'http://example.com', body: 'x' }, '/body'],
    ['a relative URL', { url: '/echo' }, '/url'],
    ['a file URL', { url: 'file:///etc/passwd' }, '/url'],
    ['credentials in the URL', { url: 'http://u:p@example.com/' }, '/url'],
  ])('refuses %s', async (_name, config, field) => {
    expect((await failure(config)).field).toBe(field);
  });
});

describe('http step network policy', () => {
  const guarded = () => stepContext({}, { outbound: new Outbound(publicNetworkOnly()) });

  it.each([
    ['a loopback IP', () => `${base}/echo`, 'a loopback address'],
    ['a loopback IPv6', () => `http://[::1]:${port}/echo`, 'a loopback address'],
    ['the metadata endpoint', () => 'http://169.254.169.254/latest/meta-data', 'a link-local address'],
    ['a private IP', () => 'http://10.0.0.1/', 'a private address'],
    ['an IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port}/`, 'a loopback address'],
    // A name is checked on what it resolves to.
    ['a name that resolves to loopback', () => `http://localhost:${port}/echo`, 'a loopback address'],
  ])('refuses %s by default', async (_name, url, why) => {
    const err = await failure({ url: url() }, guarded());
    expect(err.message).toContain(why);
    expect(err.message).toContain('HOOKFLOW_ALLOW_PRIVATE_NETWORK=true');
    expect(err.field).toBe('/url');
  });

  it('checks every redirect hop again', async () => {
    // Only 127.0.0.1 is allowed here: the first hop passes, the redirect to 127.0.0.2 must not.
    const policy: NetworkPolicy = { refuse: (a) => (a === '127.0.0.1' ? undefined : 'not on the test list') };
    const ctx = stepContext({}, { outbound: new Outbound(policy) });
    const to = encodeURIComponent(`http://127.0.0.2:${port}/echo`);
    const err = await failure({ url: `${base}/redirect?to=${to}` }, ctx);
    expect(err.message).toContain('Refused to connect to 127.0.0.2: it is not on the test list');
    await ctx.outbound.close();
  });
});

describe('idempotencyKeyOf (SPEC 7d)', () => {
  const scope = (id: string) => ({
    input: {},
    trigger: {},
    steps: {},
    execution: { id, mode: 'production', workflowId: 'w', attempt: 1 },
  });

  it.each([
    ['a step at the top level', 'charge', undefined, 'ex1.charge'],
    ['a step in a forEach', 'charge', [2], 'ex1.charge.2'],
    ['a step in a loop in a loop, outermost first', 'charge', [1, 0], 'ex1.charge.1.0'],
    ['spaces and punctuation, sent as they are', 'Charge card (v2)!', undefined, 'ex1.Charge card (v2)!'],
    ['non-ASCII, as UTF-8 percent-encoded', 'café', [0], 'ex1.caf%C3%A9.0'],
    ['a line break and %, percent-encoded', 'a\nb%', undefined, 'ex1.a%0Ab%25'],
    ['a lone surrogate, as U+FFFD', 'x\ud800', undefined, 'ex1.x%EF%BF%BD'],
  ])('%s', (_case, step, indices, key) => {
    expect(idempotencyKeyOf({ scope: scope('ex1'), step, ...(indices ? { indices } : {}) })).toBe(key);
  });

  it('is undefined when the engine did not say where the step runs', () => {
    expect(idempotencyKeyOf({ step: 'charge' })).toBeUndefined();
    expect(idempotencyKeyOf({ scope: scope('ex1') })).toBeUndefined();
  });
});
