/**
 * Hostile input on a production webhook URL (SPEC 3, 4): nesting and key-count limits, prototype keys,
 * and requests whose framing lies (wrong Content-Length), sent over a raw socket because fetch refuses to.
 * Whatever arrives, the answer is never a 5xx, and a rejected request stores nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, itemOf, MULTIPART, multipart, rawExchange, storedCounts } from './webhook-http.js';

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

let server: TestServer;
let host: string;

beforeAll(async () => {
  server = await startTestServer();
  host = new URL(server.url).host;
  await createActiveWorkflow(server, { name: 'hostile', trigger: { path: 'in', methods: ['GET', 'POST'] } });
});

afterAll(async () => {
  await server?.close();
});

// The server runs in this process: a polluted Object.prototype would show here.
afterEach(() => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(({} as Record<string, unknown>).x).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_NAMES);
});

async function post(body: string | Buffer, contentType: string, path = '/webhook/in'): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
}

async function expectRejectedAndNothingStored(send: () => Promise<Response>, status: number, code: string) {
  const before = await storedCounts(server);
  await expectError(await send(), status, code);
  expect(await storedCounts(server)).toEqual(before);
}

const nestedForm = (levels: number) => `a${'[b]'.repeat(levels)}=1`;
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const manyParams = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v${i}`).join('&');

describe('nesting and key-count limits → 400 invalid_body', () => {
  it.each([
    ['50-deep form keys', () => post(nestedForm(50), 'application/x-www-form-urlencoded')],
    ['50-deep JSON', () => post(nestedJson(50), 'application/json')],
    // Far past any recursion a naive walker could survive.
    [
      '100 000-deep JSON arrays',
      () => post(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'application/json'),
    ],
    ['50-deep XML', () => post(`${'<a>'.repeat(50)}x${'</a>'.repeat(50)}`, 'application/xml')],
    ['50-deep query string', () => fetch(`${server.url}/webhook/in?${nestedForm(50)}`)],
    ['5000 form parameters', () => post(manyParams(5000), 'application/x-www-form-urlencoded')],
    // Short keys keep the URL under Node's 16 KiB header limit, so the parameter count is what is refused.
    ['5000 query parameters', () => fetch(`${server.url}/webhook/in?${'a&'.repeat(5000)}`)],
    [
      '5000 multipart fields',
      () =>
        post(multipart(Array.from({ length: 5000 }, (_, i) => ({ name: `f${i}`, value: 'v' }))), MULTIPART),
    ],
    ['a form array index past the key limit', () => post('a[5000]=x', 'application/x-www-form-urlencoded')],
  ])('%s', async (_name, send) => {
    await expectRejectedAndNothingStored(send, 400, 'invalid_body');
  });

  it('accepts nesting up to the limit (20 levels) intact', async () => {
    const res = await post(nestedForm(20), 'application/x-www-form-urlencoded');
    expect(res.status).toBe(200);
    let value = (await itemOf(server, res)).body.a;
    for (let i = 0; i < 20; i++) value = value.b;
    expect(value).toBe('1');
  });

  it('keeps every key of a wide JSON object (JSON has no key limit; nothing is dropped silently)', async () => {
    const wide = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
    const res = await post(JSON.stringify(wide), 'application/json');
    expect(res.status).toBe(200);
    expect(Object.keys((await itemOf(server, res)).body)).toHaveLength(20_000);
  });
});

describe('prototype keys are accepted as data without pollution', () => {
  /** No own `__proto__` anywhere in the stored body, and nothing named `polluted`. */
  function expectClean(value: unknown): void {
    if (value === null || typeof value !== 'object') return;
    expect(Object.hasOwn(value, '__proto__')).toBe(false);
    expect(Object.hasOwn(value, 'polluted')).toBe(false);
    for (const child of Object.values(value)) expectClean(child);
  }

  it.each([
    [
      'form __proto__[x]=1',
      '__proto__[x]=1&__proto__[polluted]=1&a=1',
      'application/x-www-form-urlencoded',
      { a: '1' },
    ],
    [
      'form constructor[prototype][polluted]=1',
      'constructor[prototype][polluted]=1&a=1',
      'application/x-www-form-urlencoded',
      { a: '1' },
    ],
    ['JSON {"__proto__":{"polluted":1}}', '{"__proto__":{"polluted":1},"a":1}', 'application/json', { a: 1 }],
    [
      'nested JSON __proto__',
      '{"a":{"__proto__":{"polluted":1},"b":2}}',
      'application/json',
      { a: { b: 2 } },
    ],
    [
      'JSON constructor.prototype',
      '{"constructor":{"prototype":{"polluted":1}},"a":1}',
      'application/json',
      { a: 1 },
    ],
    [
      'multipart field __proto__[polluted]',
      multipart([
        { name: '__proto__[polluted]', value: '1' },
        { name: 'a', value: '1' },
      ]),
      MULTIPART,
      { a: '1' },
    ],
  ])('%s', async (_name, body, contentType, expected) => {
    const res = await post(body, contentType);
    expect(res.status).toBe(200);
    const item = await itemOf(server, res);
    expect(item.body).toEqual(expected);
    expectClean(item.body);
    expect(Object.getPrototypeOf(item.body)).toBe(Object.prototype);
  });

  it('drops __proto__ from the query string too', async () => {
    const res = await fetch(`${server.url}/webhook/in?__proto__[polluted]=1&q=1`);
    expect(res.status).toBe(200);
    const item = await itemOf(server, res);
    expect(item.query).toEqual({ q: '1' });
    expectClean(item.query);
  });

  it('keeps an ordinary "constructor" key as data', async () => {
    const res = await post('constructor=x&toString=y', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(200);
    expect((await itemOf(server, res)).body).toEqual({ constructor: 'x', toString: 'y' });
  });
});

describe('lying framing (raw socket) → never a 5xx, nothing stored', () => {
  const head = (extra: string) =>
    `POST /webhook/in HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n${extra}\r\n`;

  async function expectNo5xxAndNothingStored(
    request: string,
    options: Parameters<typeof rawExchange>[2],
  ): ReturnType<typeof rawExchange> {
    const before = await storedCounts(server);
    const result = await rawExchange(server, request, options);
    for (const status of result.statuses) expect(status, result.raw).toBeLessThan(500);
    // The server is still healthy, and the lying request left no trace.
    const ok = await fetch(`${server.url}/webhook/in?after=1`);
    expect(ok.status).toBe(200);
    expect((await storedCounts(server)).executions).toBe(before.executions + 1);
    expect({ ...(await storedCounts(server)), executions: before.executions }).toEqual(before);
    return result;
  }

  it('Content-Length larger than the body, then the client closes', async () => {
    await expectNo5xxAndNothingStored(`${head('Content-Length: 100\r\n')}{"a":1}`, {
      afterWrite: 'end',
      waitMs: 1000,
    });
  });

  it('Content-Length larger than the body, the client holds the socket and gives up', async () => {
    const { statuses } = await expectNo5xxAndNothingStored(`${head('Content-Length: 100\r\n')}{"a":1}`, {
      afterWrite: 'hold',
      waitMs: 300,
    });
    // The server waits for the rest of the body: no answer at all is the right one.
    expect(statuses).toEqual([]);
  });

  it('Content-Length smaller than the body: the cut body is invalid, the rest is not a request', async () => {
    const { statuses } = await expectNo5xxAndNothingStored(`${head('Content-Length: 5\r\n')}{"a":1,"b":2}`, {
      afterWrite: 'end',
      waitMs: 1000,
    });
    // Node refuses the leftover bytes as a malformed next request and closes the connection.
    expect(statuses[0]).toBe(400);
  });

  it.each([
    ['a non-numeric Content-Length', 'Content-Length: abc\r\n'],
    ['a negative Content-Length', 'Content-Length: -5\r\n'],
    ['two different Content-Length headers', 'Content-Length: 7\r\nContent-Length: 8\r\n'],
    ['Content-Length together with chunked encoding', 'Content-Length: 7\r\nTransfer-Encoding: chunked\r\n'],
  ])('%s is refused with a 400', async (_name, headers) => {
    const { statuses } = await expectNo5xxAndNothingStored(`${head(headers)}{"a":1}`, {
      afterWrite: 'end',
      waitMs: 1000,
    });
    expect(statuses[0]).toBe(400);
  });

  it('a malformed chunk size is refused with a 400', async () => {
    const { statuses } = await expectNo5xxAndNothingStored(
      `${head('Transfer-Encoding: chunked\r\n')}zz\r\n{"a":1}\r\n0\r\n\r\n`,
      {
        afterWrite: 'end',
        waitMs: 1000,
      },
    );
    expect(statuses[0]).toBe(400);
  });

  it('a chunked body cut off before its last chunk', async () => {
    await expectNo5xxAndNothingStored(`${head('Transfer-Encoding: chunked\r\n')}7\r\n{"a":1}\r\n`, {
      afterWrite: 'end',
      waitMs: 1000,
    });
  });

  it('a declared terabyte is refused at once and the connection closed, not drained', async () => {
    const { raw, statuses, closedByServer } = await expectNo5xxAndNothingStored(
      `${head('Content-Length: 1000000000000\r\n')}{"a":1}`,
      { afterWrite: 'hold', waitMs: 2000 },
    );
    expect(statuses).toEqual([413]);
    expect(raw).toContain('"code":"payload_too_large"');
    expect(raw.toLowerCase()).toContain('connection: close');
    expect(closedByServer).toBe(true);
  });
});
