/**
 * Group commit (SPEC 10, FIELD-NOTES 3 and 4): many concurrent requests share transactions, yet each
 * accepted request gets its own execution id and its own stored execution; none is lost or doubled.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { countRows, getExecution } from './webhook-http.js';

const CONCURRENT = 200;

let server: TestServer;
let workflowId: string;

beforeAll(async () => {
  // No worker: its claims are transactions too, and this file counts the ones acceptance makes.
  server = await startTestServer({ roles: { http: true, worker: false } });
  workflowId = (await createActiveWorkflow(server, { name: 'burst', trigger: { path: 'burst' } })).id;
});

afterAll(async () => {
  await server?.close();
});

/**
 * Counts store transactions (callback ones and batches of hot writes) while `fn` runs. A spy, not
 * a mock: every transaction still runs.
 */
async function countTransactions<T>(fn: () => Promise<T>): Promise<{ result: T; transactions: number }> {
  const store = server.hookflow.store;
  const { transaction, writeHot } = store;
  let transactions = 0;
  store.transaction = (write, options) => {
    transactions++;
    return transaction(write, options);
  };
  store.writeHot = (writes) => {
    transactions++;
    return writeHot(writes);
  };
  try {
    return { result: await fn(), transactions };
  } finally {
    Object.assign(store, { transaction, writeHot });
  }
}

/** Opens `n` connections, then writes one POST on each at once; resolves with each raw response. */
async function burstOnOpenConnections(n: number): Promise<string[]> {
  const { port } = new URL(server.url);
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  // Let the server accept every connection first, so the requests below arrive together.
  await new Promise((r) => setTimeout(r, 100));
  return Promise.all(
    sockets.map(
      (socket, i) =>
        new Promise<string>((resolve, reject) => {
          let raw = '';
          socket.setEncoding('utf8');
          socket.on('data', (chunk: string) => {
            raw += chunk;
            const head = raw.indexOf('\r\n\r\n');
            const length = /content-length: (\d+)/i.exec(raw)?.[1];
            if (head !== -1 && length !== undefined && raw.length >= head + 4 + Number(length)) {
              socket.destroy();
              resolve(raw);
            }
          });
          socket.once('error', reject);
          const body = JSON.stringify({ burst: i });
          socket.write(
            `POST /webhook/burst HTTP/1.1\r\nHost: ${server.url.slice(7)}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          );
        }),
    ),
  );
}

describe('group commit', () => {
  it(`accepts ${CONCURRENT} concurrent POSTs, each with its own stored execution`, async () => {
    const before = await countRows(server, 'executions');
    const responses = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, n) =>
        fetch(`${server.url}/webhook/burst`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ n }),
        }).then(async (res) => ({
          status: res.status,
          header: res.headers.get('x-hookflow-execution-id'),
          body: (await res.json()) as { executionId?: string },
        })),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(CONCURRENT).fill(200));
    for (const r of responses) expect(r.body.executionId).toBe(r.header);
    const ids = responses.map((r) => r.body.executionId!);
    expect(new Set(ids).size).toBe(CONCURRENT);

    expect(await countRows(server, 'executions')).toBe(before + CONCURRENT);
    const listed = await server.api('GET', `/api/v1/executions?workflowId=${workflowId}&limit=200`);
    expect(listed.status).toBe(200);
    expect(new Set(listed.body.items.map((e: { id: string }) => e.id))).toEqual(new Set(ids));
    // Each id holds the data of the request it answered (no mix-ups inside a batch).
    for (const n of [0, 57, 123, CONCURRENT - 1]) {
      expect((await getExecution(server, ids[n]!)).trigger.body).toEqual({ n });
    }
  });

  it('writes requests that arrive together in shared transactions, not one each', async () => {
    const before = await countRows(server, 'executions');
    const { result: raws, transactions } = await countTransactions(() => burstOnOpenConnections(CONCURRENT));
    const ids = raws.map((raw) => {
      expect(raw.startsWith('HTTP/1.1 200 '), raw).toBe(true);
      return (JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { executionId: string }).executionId;
    });
    expect(new Set(ids).size).toBe(CONCURRENT);
    expect(await countRows(server, 'executions')).toBe(before + CONCURRENT);
    // One fsync covers many requests: 200 requests read in one go must not make 200 transactions.
    expect(transactions).toBeGreaterThan(0);
    expect(transactions).toBeLessThan(CONCURRENT / 4);
    const burst = await getExecution(server, ids[42]!);
    expect(burst.trigger.body).toEqual({ burst: 42 });
  });
});
