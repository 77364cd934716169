/**
 * Files between steps (SPEC 7e) over real HTTP: an uploaded file sent on by an `http` step as its
 * raw body and as multipart, a response stored as a file (`responseType: "file"`) and downloaded
 * through /api/v1/files/:id, and such files deleted with their execution by retention. The local
 * receiver hashes what it gets as it streams in, so the test holds no file either.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { Retention } from '../../src/queue/retention.js';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { createActiveWorkflow, json, startTestServer, type TestServer, tempDir } from '../helpers/server.js';
import { finishedExecution } from './int-helpers.js';

interface Got {
  path: string;
  headers: http.IncomingHttpHeaders;
  size: number;
  sha256: string;
  /** multipart: the fields, and each file's name, type, size and sha256. */
  fields?: Record<string, string>;
  files?: { field: string; filename: string; mimeType: string; size: number; sha256: string }[];
}

/**
 * A receiver on loopback: `/raw` hashes the body, `/form` parses multipart (busboy) and hashes
 * each file, `/download?size=N` answers N random bytes (their sha256 in a header) as a PDF.
 */
async function startReceiver() {
  const got: Got[] = [];
  const waiters: ((g: Got) => void)[] = [];
  const push = (g: Got) => {
    got.push(g);
    waiters.shift()?.(g);
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/download') {
      const bytes = randomBytes(Number(url.searchParams.get('size')));
      res.writeHead(200, {
        'content-type': 'application/pdf',
        'content-disposition': 'attachment; filename="invoice 7.pdf"',
        'x-sha256': createHash('sha256').update(bytes).digest('hex'),
      });
      res.end(bytes);
      return;
    }
    if (url.pathname === '/form') {
      const fields: Record<string, string> = {};
      const files: NonNullable<Got['files']> = [];
      const bb = busboy({ headers: req.headers });
      bb.on('field', (name, value) => (fields[name] = value));
      bb.on('file', (field, stream, info) => {
        const hash = createHash('sha256');
        let size = 0;
        stream.on('data', (c: Buffer) => {
          size += c.length;
          hash.update(c);
        });
        stream.on('end', () =>
          files.push({
            field,
            filename: info.filename ?? '',
            mimeType: info.mimeType,
            size,
            sha256: hash.digest('hex'),
          }),
        );
      });
      bb.on('close', () => {
        push({ path: url.pathname, headers: req.headers, size: 0, sha256: '', fields, files });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
      req.pipe(bb);
      return;
    }
    const hash = createHash('sha256');
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      hash.update(c);
    });
    req.on('end', () => {
      push({ path: url.pathname, headers: req.headers, size, sha256: hash.digest('hex') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    next: () => new Promise<Got>((r) => waiters.push(r)),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** `size` pseudo-random bytes (1 MiB repeated) and their sha256. */
function bigBody(size: number): { body: Buffer; sha256: string } {
  const block = randomBytes(1024 * 1024);
  const body = Buffer.concat(Array.from({ length: Math.ceil(size / block.length) }, () => block)).subarray(
    0,
    size,
  );
  return { body, sha256: createHash('sha256').update(body).digest('hex') };
}

/** VmHWM (peak resident set) of a process, in bytes, read from outside. */
function peakRss(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
  return Number(line![1]) * 1024;
}

describe('a 50 MB upload sent on by an http step (a hookflow process)', () => {
  const SIZE = 50 * 1024 * 1024;
  let receiver: Receiver;
  let server: ServerProcess;
  let headers: Record<string, string>;

  beforeAll(async () => {
    receiver = await startReceiver();
    const env = {
      HOOKFLOW_DATA_DIR: tempDir(),
      HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
      HOOKFLOW_MAX_BODY_BYTES: String(64 * 1024 * 1024),
      HOOKFLOW_LOG_LEVEL: 'warn',
    };
    const token = (await runCli(['tokens', 'create', '--name', 'files'], env)).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    server = await startServerProcess(env);
  }, 60_000);
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await receiver?.close();
  });

  const api = async (method: string, route: string, body?: unknown) =>
    json(
      await fetch(`${server.url}${route}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );

  it('arrives with the same sha256 and type, and the process does not hold it twice', async () => {
    const wf = await api('POST', '/api/v1/workflows', {
      name: 'forward',
      trigger: { path: 'upload', response: { mode: 'lastStep', timeoutMs: 120_000 } },
      steps: [
        {
          name: 'send',
          type: 'http',
          method: 'POST',
          url: `${receiver.url}/raw`,
          body: '{{ $trigger.files[0] }}',
        },
      ],
    });
    await api('POST', `/api/v1/workflows/${wf.id}/activate`);

    // A first, small file: the executor's engine thread starts with its first execution (~50 MB
    // of its own, whatever the file), so the measure below is what the big file costs.
    const warm = receiver.next();
    await fetch(`${server.url}/webhook/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip' },
      body: 'PK\x03\x04',
    });
    expect((await warm).size).toBe(4);

    const received = receiver.next();
    const { body, sha256 } = bigBody(SIZE);
    const before = peakRss(server.child.pid!);
    // With its length, as curl sends a file (a chunked body is gathered and joined on arrival).
    const res = await fetch(`${server.url}/webhook/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body,
    });
    expect(res.status).toBe(200);
    const got = await received;
    const growth = peakRss(server.child.pid!) - before;

    expect(got.size).toBe(SIZE);
    expect(got.sha256).toBe(sha256);
    expect(got.headers['content-type']).toBe('application/pdf');
    expect(got.headers['content-length']).toBe(String(SIZE));
    // Accepting the upload holds its body once (a request is committed whole before its answer,
    // SPEC 3); sending it on streams it from the store a part at a time. Twice would be 100 MB.
    console.log(
      `peak RSS growth, accepting and sending on ${SIZE >> 20} MB: ${(growth / 1048576).toFixed(1)} MB`,
    );
    // Measured 29-91 MB on a loaded 2-core machine: the body once, and parts not yet collected.
    expect(growth).toBeLessThan(2 * SIZE);

    // The same stored file sent on alone (its reference in a small JSON request): what sending
    // costs, without the upload. Flat: parts of 1 MiB, not the file.
    const again = await api('POST', '/api/v1/workflows', {
      name: 'again',
      trigger: { path: 'again', response: { mode: 'lastStep', timeoutMs: 120_000 } },
      steps: [
        { name: 'send', type: 'http', method: 'POST', url: `${receiver.url}/raw`, body: '{{ body.file }}' },
      ],
    });
    await api('POST', `/api/v1/workflows/${again.id}/activate`);
    const [stored] = (await api('GET', `/api/v1/executions/${res.headers.get('x-hookflow-execution-id')}`))
      .trigger.files;
    const resent = receiver.next();
    const beforeResend = peakRss(server.child.pid!);
    const res2 = await fetch(`${server.url}/webhook/again`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ file: stored }),
    });
    expect(res2.status).toBe(200);
    expect(await resent).toMatchObject({ size: SIZE, sha256 });
    const sendGrowth = peakRss(server.child.pid!) - beforeResend;
    console.log(
      `peak RSS growth, sending on a stored ${SIZE >> 20} MB file: ${(sendGrowth / 1048576).toFixed(1)} MB`,
    );
    // Measured 0-40 MB on a loaded 2-core machine: parts already sent but not yet collected (V8
    // collects memory outside its heap, such as these buffers, only after tens of MB of it); a
    // copy of the file held would be 50 MB by itself.
    expect(sendGrowth).toBeLessThan(SIZE);
  }, 120_000);
});

describe('files between steps (in-process server)', () => {
  let receiver: Receiver;
  let server: TestServer;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('sends trigger files as multipart with fields, each file with its name, type and bytes', async () => {
    await createActiveWorkflow(server, {
      name: 'multipart',
      trigger: { path: 'mp' },
      steps: [
        {
          name: 'send',
          type: 'http',
          method: 'POST',
          url: `${receiver.url}/form`,
          multipart: {
            fields: { customer: '{{ body.customer }}', count: '{{ $count($trigger.files) }}' },
            files: { doc: '{{ $trigger.files[0] }}', all: '{{ $trigger.files }}' },
          },
        },
      ],
    });
    const a = randomBytes(300_000);
    const b = Buffer.from('second file, text\n');
    const form = new FormData();
    form.append('customer', 'acme');
    form.append('contract', new Blob([a], { type: 'application/pdf' }), 'contract "v2".pdf');
    form.append('note', new Blob([b], { type: 'text/plain' }), 'note.txt');
    const received = receiver.next();
    const res = await fetch(`${server.url}/webhook/mp`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const { executionId } = await json(res);
    const got = await received;
    const sha = (x: Buffer) => createHash('sha256').update(x).digest('hex');
    expect(got.fields).toEqual({ customer: 'acme', count: '2' });
    expect(got.files).toEqual([
      {
        field: 'doc',
        filename: 'contract %22v2%22.pdf',
        mimeType: 'application/pdf',
        size: a.length,
        sha256: sha(a),
      },
      {
        field: 'all',
        filename: 'contract %22v2%22.pdf',
        mimeType: 'application/pdf',
        size: a.length,
        sha256: sha(a),
      },
      { field: 'all', filename: 'note.txt', mimeType: 'text/plain', size: b.length, sha256: sha(b) },
    ]);
    const execution = await finishedExecution(server, executionId);
    expect(execution.status).toBe('succeeded');
  });

  it('stores a response as a file ({status, headers, file}) that the files route serves byte for byte', async () => {
    const size = 3 * 1024 * 1024 + 17;
    const wf = await createActiveWorkflow(server, {
      name: 'download',
      trigger: { path: 'dl', response: { mode: 'lastStep' } },
      steps: [
        { name: 'fetch', type: 'http', url: `${receiver.url}/download?size=${size}`, responseType: 'file' },
        {
          name: 'send',
          type: 'http',
          method: 'PUT',
          url: `${receiver.url}/raw`,
          body: '{{ $steps.fetch.file }}',
        },
      ],
    });
    const received = receiver.next();
    const res = await fetch(`${server.url}/webhook/dl`, { method: 'POST' });
    expect(res.status).toBe(200);
    const executionId = res.headers.get('x-hookflow-execution-id')!;
    const execution = await finishedExecution(server, executionId);
    expect(execution.status).toBe('succeeded');
    const fetched = execution.steps[0].output;
    expect(fetched.status).toBe(200);
    expect(fetched.body).toBeUndefined();
    expect(fetched.file).toEqual({
      id: expect.any(String),
      filename: 'invoice 7.pdf',
      mimeType: 'application/pdf',
      size,
      sha256: fetched.headers['x-sha256'],
    });
    // Sent on by the next step.
    const got = await received;
    expect(got).toMatchObject({ size, sha256: fetched.file.sha256 });
    expect(got.headers['content-type']).toBe('application/pdf');
    // Downloaded through the API.
    const download = await fetch(`${server.url}/api/v1/files/${fetched.file.id}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('x-content-sha256')).toBe(fetched.file.sha256);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(fetched.file.sha256);
    // The record holds the reference, not the bytes.
    expect(JSON.stringify(execution).length).toBeLessThan(10_000);
    expect(wf.id).toBeTruthy();
  });

  it('fails the step naming the field when a body reference names no stored file', async () => {
    await createActiveWorkflow(server, {
      name: 'forged',
      trigger: { path: 'forged' },
      steps: [
        {
          name: 'send',
          type: 'http',
          method: 'POST',
          url: `${receiver.url}/raw`,
          body: '{{ $trigger.files[0] ~> |$|{"sha256": "0000000000000000000000000000000000000000000000000000000000000000"}| }}',
        },
      ],
    });
    const res = await fetch(`${server.url}/webhook/forged`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from('some bytes'),
    });
    const execution = await finishedExecution(server, (await json(res)).executionId);
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toMatch(/is not stored/);
    expect(receiver.got.filter((g) => g.path === '/raw' && g.size === 10)).toEqual([]);
  });

  it('deletes a stored response with its execution (retention)', async () => {
    await createActiveWorkflow(server, {
      name: 'kept briefly',
      trigger: { path: 'brief' },
      steps: [
        { name: 'fetch', type: 'http', url: `${receiver.url}/download?size=2500000`, responseType: 'file' },
      ],
    });
    const res = await fetch(`${server.url}/webhook/brief`, { method: 'POST' });
    const execution = await finishedExecution(server, (await json(res)).executionId);
    const file = execution.steps[0].output.file;
    const { db } = server.hookflow.store;
    const parts = () => db.selectFrom('blob_parts').select('seq').where('blob_id', '=', file.id).execute();
    expect((await parts()).length).toBe(3);
    // A newer execution, so that keeping one deletes this one.
    const newer = await fetch(`${server.url}/webhook/mp`, { method: 'POST', body: new FormData() });
    await finishedExecution(server, (await json(newer)).executionId);
    await new Retention({
      store: server.hookflow.store,
      log: createLogger('silent', 2),
      maxAgeMs: undefined,
      maxCount: 1,
    }).sweep();
    expect(await db.selectFrom('executions').select('id').where('id', '=', execution.id).execute()).toEqual(
      [],
    );
    expect(await parts()).toEqual([]);
    expect(await db.selectFrom('blobs').select('id').where('id', '=', file.id).execute()).toEqual([]);
    const download = await fetch(`${server.url}/api/v1/files/${file.id}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(download.status).toBe(404);
  });
});
