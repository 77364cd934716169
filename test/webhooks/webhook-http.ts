/**
 * Helpers shared by the webhook integration tests (*.int.test.ts in this folder): counting what the
 * store holds, reading a stored trigger item back through the API, building multipart bodies and
 * talking raw HTTP/1.1 over a socket for requests `fetch` refuses to send (wrong content-length).
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';

export const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Rows in a store table: "nothing stored" is asserted on the store itself, not on a response. */
export async function countRows(
  server: TestServer,
  table: 'executions' | 'blobs' | 'test_events',
): Promise<number> {
  const row = await server.hookflow.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface StoredCounts {
  executions: number;
  blobs: number;
  testEvents: number;
}

export async function storedCounts(server: TestServer): Promise<StoredCounts> {
  const [executions, blobs, testEvents] = await Promise.all([
    countRows(server, 'executions'),
    countRows(server, 'blobs'),
    countRows(server, 'test_events'),
  ]);
  return { executions, blobs, testEvents };
}

/** The execution as the API returns it (asserting 200). */
// biome-ignore lint/suspicious/noExplicitAny: JSON from the API
export async function getExecution(server: TestServer, id: string): Promise<any> {
  const res = await server.api('GET', `/api/v1/executions/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** The trigger item stored for an accepted webhook response (read through the API). */
// biome-ignore lint/suspicious/noExplicitAny: JSON from the API
export async function itemOf(server: TestServer, res: Response): Promise<any> {
  const id = res.headers.get('x-hookflow-execution-id');
  expect(id).toBeTruthy();
  return (await getExecution(server, id!)).trigger;
}

/** Asserts the SPEC error body and status; returns the parsed body. */
export async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<{ code: string; message: string; hint?: string }> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  expect(res.headers.get('content-type') ?? '').toContain('application/json');
  const body = JSON.parse(text) as { code: string; message: string; hint?: string };
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('x-hookflow-execution-id')).toBeNull();
  return body;
}

export interface Part {
  name: string;
  value?: string;
  filename?: string;
  type?: string;
  data?: Buffer;
}

export const BOUNDARY = 'hookflow-test-boundary-7Fq2';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

export function multipart(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    if (part.type !== undefined) head += `\r\nContent-Type: ${part.type}`;
    chunks.push(
      Buffer.from(`${head}\r\n\r\n`),
      part.data ?? Buffer.from(part.value ?? ''),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

/** A body sent with `Transfer-Encoding: chunked` (no Content-Length), in pieces of `chunkSize`. */
export function chunked(
  data: Buffer,
  chunkSize = 1024,
): { body: ReadableStream<Uint8Array>; duplex: 'half' } {
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= data.length) {
        controller.close();
        return;
      }
      controller.enqueue(data.subarray(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
  return { body, duplex: 'half' };
}

/**
 * Writes `request` (raw HTTP/1.1 text or bytes) on a fresh socket and collects whatever comes back.
 * `afterWrite`: 'end' half-closes after writing (the client sent all it will send), 'hold' keeps the socket
 * open; either way the socket is destroyed after `waitMs` if the server has not closed it.
 * Returns the raw response text, every status code found in it (pipelined garbage may add one) and
 * whether the server closed the connection before `waitMs`.
 */
export function rawExchange(
  server: TestServer,
  request: string | Buffer,
  { afterWrite = 'end', waitMs = 1000 }: { afterWrite?: 'end' | 'hold'; waitMs?: number } = {},
): Promise<{ raw: string; statuses: number[]; closedByServer: boolean }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    let closedByServer = true;
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, waitMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // The server may reset a connection it has given up on; that is an answer too.
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const statuses = [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      resolve({ raw, statuses, closedByServer });
    });
    socket.write(request, () => {
      if (afterWrite === 'end') socket.end();
    });
  });
}
