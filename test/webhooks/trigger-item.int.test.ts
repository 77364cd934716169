/**
 * SPEC 4 over real HTTP: what each content type becomes in the stored trigger item, read back through
 * GET /api/v1/executions/:id (and files through GET /api/v1/files/:id).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { itemOf, MULTIPART, multipart, sha256 } from './webhook-http.js';

// Not the harness default, so the assertion proves the item's URL comes from HOOKFLOW_BASE_URL.
const BASE_URL = 'https://hooks.example.test';

let server: TestServer;
let workflow: { id: string; trigger: { productionUrl: string } };

async function post(
  body: RequestInit['body'],
  headers: Record<string, string> = {},
  path = 'orders/42',
): Promise<Response> {
  const res = await fetch(`${server.url}/webhook/${path}`, { method: 'POST', headers, body });
  expect(res.status, await res.clone().text()).toBe(200);
  return res;
}

beforeAll(async () => {
  server = await startTestServer({ env: { HOOKFLOW_BASE_URL: BASE_URL } });
  workflow = await createActiveWorkflow(server, {
    name: 'items',
    trigger: { path: 'orders/:id', methods: ['GET', 'POST', 'PUT'] },
  });
});

afterAll(async () => {
  await server?.close();
});

describe('form bodies (application/x-www-form-urlencoded)', () => {
  it("turns the seed's param1=a&param2=b into body fields", async () => {
    const res = await post('param1=a&param2=b', { 'content-type': 'application/x-www-form-urlencoded' });
    const item = await itemOf(server, res);
    expect(item.body).toEqual({ param1: 'a', param2: 'b' });
    expect(item.files).toEqual([]);
    expect(item.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it.each([
    ['repeated keys become arrays', 'tag=a&tag=b&tag=c', { tag: ['a', 'b', 'c'] }],
    ['a[b]=c nests', 'a[b]=c&a[d][e]=f', { a: { b: 'c', d: { e: 'f' } } }],
    ['a[]=x builds an array', 'list[]=x&list[]=y', { list: ['x', 'y'] }],
    ['percent and plus decoding', 'q=hello+world&e=%E2%82%AC', { q: 'hello world', e: '€' }],
    ['a value-less key is an empty string', 'flag&x=1', { flag: '', x: '1' }],
  ])('%s', async (_name, form, expected) => {
    const res = await post(form, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
    expect((await itemOf(server, res)).body).toEqual(expected);
  });
});

describe('JSON, XML and text', () => {
  it('parses application/json', async () => {
    const payload = { order: { id: 7, items: [{ sku: 'x', qty: 2 }] }, ok: true, none: null };
    const res = await post(JSON.stringify(payload), { 'content-type': 'application/json' });
    expect((await itemOf(server, res)).body).toEqual(payload);
  });

  it('parses +json types such as application/vnd.api+json', async () => {
    const payload = { data: { type: 'orders', id: '1' } };
    const res = await post(JSON.stringify(payload), {
      'content-type': 'application/vnd.api+json; charset=utf-8',
    });
    expect((await itemOf(server, res)).body).toEqual(payload);
  });

  it.each(['application/xml', 'text/xml', 'application/atom+xml'])(
    'parses %s into an object',
    async (type) => {
      const xml = '<?xml version="1.0"?><order id="7"><item>a</item><item>b</item><total>007</total></order>';
      const res = await post(xml, { 'content-type': type });
      expect((await itemOf(server, res)).body).toEqual({
        order: { '@_id': '7', item: ['a', 'b'], total: '007' },
      });
    },
  );

  it('keeps text/plain as a string', async () => {
    const res = await post('hello\nworld ✓', { 'content-type': 'text/plain; charset=utf-8' });
    const item = await itemOf(server, res);
    expect(item.body).toBe('hello\nworld ✓');
    expect(item.files).toEqual([]);
  });
});

describe('files', () => {
  async function download(id: string): Promise<{ res: Response; bytes: Buffer }> {
    const res = await fetch(`${server.url}/api/v1/files/${id}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(res.status).toBe(200);
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  it('puts multipart fields in body and files in files, downloadable byte for byte', async () => {
    // Every byte value, so any text re-encoding on the way in or out would show.
    const data = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7) % 256));
    const body = multipart([
      { name: 'title', value: 'Quarterly report' },
      { name: 'meta[author]', value: 'Ann' },
      { name: 'tags', value: 'a' },
      { name: 'tags', value: 'b' },
      { name: 'attachment', filename: 'report.bin', type: 'application/octet-stream', data },
    ]);
    const res = await post(body, { 'content-type': MULTIPART });
    const item = await itemOf(server, res);
    expect(item.body).toEqual({ title: 'Quarterly report', meta: { author: 'Ann' }, tags: ['a', 'b'] });
    expect(item.files).toHaveLength(1);
    const [file] = item.files;
    expect(file).toMatchObject({
      field: 'attachment',
      filename: 'report.bin',
      mimeType: 'application/octet-stream',
      size: data.length,
      sha256: sha256(data),
    });
    expect(typeof file.id).toBe('string');

    const { res: fileRes, bytes } = await download(file.id);
    expect(bytes.equals(data)).toBe(true);
    expect(sha256(bytes)).toBe(file.sha256);
    expect(fileRes.headers.get('content-type')).toContain('application/octet-stream');
    expect(fileRes.headers.get('content-disposition')).toContain('report.bin');
  });

  it.each([
    [
      'an unknown content type',
      { 'content-type': 'application/x-custom-thing' },
      'application/x-custom-thing',
    ],
    ['no content type at all', {} as Record<string, string>, 'application/octet-stream'],
  ])('keeps the raw bytes of %s as a file', async (_name, headers, mimeType) => {
    const data = Buffer.from([0, 1, 2, 250, 251, 252, 13, 10, 0x7b]);
    const res = await post(data, headers);
    const item = await itemOf(server, res);
    expect(item.body).toEqual({});
    expect(item.files).toHaveLength(1);
    expect(item.files[0]).toMatchObject({ mimeType, size: data.length, sha256: sha256(data) });
    expect('content-type' in item.headers).toBe(headers['content-type'] !== undefined);
    const { bytes } = await download(item.files[0].id);
    expect(bytes.equals(data)).toBe(true);
  });

  it('answers 404 not_found for an unknown file id', async () => {
    const res = await server.api('GET', '/api/v1/files/0000-no-such-file');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('empty bodies and GET', () => {
  it.each([
    ['application/json', 'application/json'],
    ['application/xml', 'application/xml'],
    ['form', 'application/x-www-form-urlencoded'],
    ['multipart', MULTIPART],
    ['an unknown type', 'application/x-custom-thing'],
  ])('an empty %s body is {}', async (_name, type) => {
    const res = await post('', { 'content-type': type });
    const item = await itemOf(server, res);
    expect(item.body).toEqual({});
    expect(item.files).toEqual([]);
  });

  it('an empty body without a content type is {}', async () => {
    const item = await itemOf(server, await post(undefined));
    expect(item.body).toEqual({});
    expect(item.files).toEqual([]);
  });

  it('GET carries its data in query; body is {}', async () => {
    const res = await fetch(`${server.url}/webhook/orders/9?a=1&b=x&b=y&c[d]=e`);
    expect(res.status).toBe(200);
    const item = await itemOf(server, res);
    expect(item.method).toBe('GET');
    expect(item.query).toEqual({ a: '1', b: ['x', 'y'], c: { d: 'e' } });
    expect(item.body).toEqual({});
    expect(item.files).toEqual([]);
  });

  it('parses the query of a POST too', async () => {
    const res = await post(
      'x=1',
      { 'content-type': 'application/x-www-form-urlencoded' },
      'orders/5?src=crm&src=web',
    );
    const item = await itemOf(server, res);
    expect(item.query).toEqual({ src: ['crm', 'web'] });
    expect(item.body).toEqual({ x: '1' });
  });
});

describe('the rest of the item', () => {
  it('has method, path, params, lower-cased headers, mode, URL and time', async () => {
    const before = Date.now();
    const res = await fetch(`${server.url}/webhook/orders/42?a=1`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Custom-Header': 'Value-Kept', 'X-UPPER': 'Y' },
      body: '{"k":"v"}',
    });
    expect(res.status).toBe(200);
    const item = await itemOf(server, res);
    expect(item).toMatchObject({
      method: 'PUT',
      path: 'orders/42',
      params: { id: '42' },
      query: { a: '1' },
      body: { k: 'v' },
      files: [],
      executionMode: 'production',
      webhookUrl: `${BASE_URL}/webhook/orders/42`,
    });
    expect(item.headers['x-custom-header']).toBe('Value-Kept');
    expect(item.headers['x-upper']).toBe('Y');
    for (const name of Object.keys(item.headers)) expect(name).toBe(name.toLowerCase());
    const received = Date.parse(item.receivedAt);
    expect(new Date(received).toISOString()).toBe(item.receivedAt);
    expect(received).toBeGreaterThanOrEqual(before - 1000);
    expect(received).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("builds the workflow's URLs from HOOKFLOW_BASE_URL", () => {
    expect(workflow.trigger.productionUrl).toBe(`${BASE_URL}/webhook/orders/:id`);
  });

  it('records the execution as a production run of the current version', async () => {
    const res = await post('a=1', { 'content-type': 'application/x-www-form-urlencoded' });
    const current = await server.api('GET', `/api/v1/workflows/${workflow.id}`);
    const execution = await server.api(
      'GET',
      `/api/v1/executions/${res.headers.get('x-hookflow-execution-id')}`,
    );
    expect(execution.body).toMatchObject({
      workflowId: workflow.id,
      workflowVersion: current.body.version,
      mode: 'production',
    });
  });
});
