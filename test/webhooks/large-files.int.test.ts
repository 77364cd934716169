/**
 * Files over 1 MiB are stored in parts (store/blobs.ts): what the API hands back is the file as
 * sent, byte for byte, for a raw body and for multipart files next to small ones; on SQLite and
 * PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { itemOf, MULTIPART, multipart, sha256 } from './webhook-http.js';

describe.each([
  ['sqlite', false],
  ['postgres', true],
])('large files on %s', (_name, postgres) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ postgres });
    await createActiveWorkflow(server, { name: 'files', trigger: { path: 'files' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const download = async (id: string) => {
    const res = await fetch(`${server.url}/api/v1/files/${id}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  };

  it.each([
    ['exactly one part', 1024 * 1024],
    ['one byte over a part', 1024 * 1024 + 1],
    ['several parts and a short last one', 3 * 1024 * 1024 + 12_345],
  ])('gives a raw body back intact: %s', async (_case, size) => {
    const data = randomBytes(size);
    const res = await fetch(`${server.url}/webhook/files`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: data,
    });
    expect(res.status).toBe(200);
    const [file] = (await itemOf(server, res)).files;
    expect(file).toMatchObject({ size, sha256: sha256(data) });
    expect(sha256(await download(file.id))).toBe(sha256(data));
  });

  it('gives multipart files back intact, large and small', async () => {
    const big = randomBytes(2 * 1024 * 1024 + 7);
    const small = randomBytes(100);
    const res = await fetch(`${server.url}/webhook/files`, {
      method: 'POST',
      headers: { 'content-type': MULTIPART },
      body: multipart([
        { name: 'note', value: 'two files' },
        { name: 'big', filename: 'big.bin', type: 'application/octet-stream', data: big },
        { name: 'small', filename: 'small.bin', type: 'application/octet-stream', data: small },
      ]),
    });
    expect(res.status).toBe(200);
    const item = await itemOf(server, res);
    expect(item.body).toEqual({ note: 'two files' });
    const byField = Object.fromEntries(item.files.map((f: { field: string }) => [f.field, f]));
    expect(await download(byField.big.id)).toEqual(big);
    expect(await download(byField.small.id)).toEqual(small);
  });
});
