/**
 * Issue 32, finding 4: a request that a workflow multiplies must not stall the server. A
 * `forEach` over the request's lines copying a field of the request into each one (`set {customer:
 * "{{ $trigger.body.customer }}"}`) made a 289 MB record out of a 274 KB request (JavaScript strings
 * are shared by reference, until serialised): 2.2 GB of RSS, /healthz 5.1 s, another webhook's
 * acknowledgement 14 s; a 667 KB one ran 5 times and failed "Invalid string length".
 *
 * Now the record is bounded by HOOKFLOW_EXECUTION_RECORD_MAX_BYTES (4 MiB by default), serialised
 * on the engine thread: the big outputs are stored as markers with their size, the execution ends
 * succeeded, once, and the event loop answers /healthz within 200 ms and another webhook within
 * 1 s throughout (both polled at once while it runs). A `lastStep` caller of such an execution gets
 * `output_too_large`, and a small request that amplifies is not run before its commit (on the
 * event loop) beyond a small record: the executor's thread runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { getExecution } from '../webhooks/webhook-http.js';

const HEALTH_BUDGET_MS = 200;
const ACK_BUDGET_MS = 1_000;
const MiB = 1024 * 1024;

/**
 * The review's request: one field of ~130 KB, and `lines` lines of ~70 bytes. The field is a
 * string: the engine shares it between the copies (an object would be copied by each expression's
 * JSON round trip: real memory, bounded by the engine thread's heap, HOOKFLOW_ENGINE_MEMORY_MB).
 */
function amplifyingBody(lines: number, customerBytes = 130_000): string {
  return JSON.stringify({
    customer: `ACME ${'n'.repeat(customerBytes - 5)}`,
    lines: Array.from({ length: lines }, (_, i) => ({
      sku: `SKU-${String(i).padStart(6, '0')}`,
      qty: (i % 9) + 1,
      note: 'one line of an order: two units',
    })),
  });
}

const amplifier = (path: string, response?: Record<string, unknown>) => ({
  name: path,
  trigger: { path, ...(response ? { response } : {}) },
  steps: [
    {
      type: 'forEach',
      name: 'lines',
      items: '{{ body.lines }}',
      steps: [
        {
          type: 'set',
          name: 'line',
          fields: { customer: '{{ $trigger.body.customer }}', sku: '{{ $item.sku }}' },
        },
      ],
    },
  ],
});

async function statusOf(server: TestServer, id: string): Promise<string> {
  const row = await server.hookflow.store.db
    .selectFrom('executions')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.status;
}

async function storedRecordBytes(server: TestServer, id: string): Promise<number> {
  const row = await server.hookflow.store.db
    .selectFrom('executions')
    .select('steps')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return Buffer.byteLength(row.steps);
}

const post = (server: TestServer, path: string, body: string) =>
  fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });

/** Polls `fn` in a loop until `stop()`; its latencies. */
async function poll(fn: () => Promise<Response>, stop: () => boolean): Promise<number[]> {
  const ms: number[] = [];
  while (!stop()) {
    const started = performance.now();
    const res = await fn();
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    ms.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 10));
  }
  return ms;
}

/**
 * Sends `body` to `path`, and while its execution runs polls /healthz and the light webhook at once
 * (two loops); returns their latencies and the execution's id once it has finished.
 */
async function probeWhileAmplifying(server: TestServer, path: string, body: string) {
  // Warm up both probes first.
  await (await post(server, 'light', '{"n":0}')).arrayBuffer();
  await (await fetch(`${server.url}/healthz`)).arrayBuffer();
  const started = performance.now();
  let id: string | undefined;
  let finished = false;
  const sent = post(server, path, body).then(async (res) => {
    expect(res.status).toBe(200);
    id = res.headers.get('x-hookflow-execution-id') ?? undefined;
    await res.arrayBuffer();
  });
  const watch = (async () => {
    while (!finished) {
      if (id !== undefined && !['queued', 'running'].includes(await statusOf(server, id))) finished = true;
      if (performance.now() - started > 90_000) throw new Error('the execution never finished');
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  let n = 0;
  const [health, ack] = await Promise.all([
    poll(
      () => fetch(`${server.url}/healthz`),
      () => finished,
    ),
    poll(
      () => post(server, 'light', `{"n":${++n}}`),
      () => finished,
    ),
    watch,
    sent,
  ]);
  const max = (xs: number[]) => Math.round(Math.max(...xs));
  console.info(
    `${path} (${Math.round(body.length / 1000)} KB): finished after ${Math.round(performance.now() - started)} ms; ` +
      `${health.length} /healthz probes, max ${max(health)} ms; ${ack.length} acknowledgements, max ${max(ack)} ms`,
  );
  return { id: id!, health, ack };
}

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
])('%s', (_name, postgres) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
    await createActiveWorkflow(server, {
      name: 'light',
      trigger: { path: 'light' },
      steps: [{ name: 'shape', type: 'set', fields: { n: '{{ body.n }}' } }],
    });
    await createActiveWorkflow(server, amplifier('amplify'));
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('a 274 KB request making a 260 MB record: stored within the limit, the server answering throughout', async () => {
    const body = amplifyingBody(2_060);
    expect(body.length).toBeGreaterThan(270_000);
    expect(body.length).toBeLessThan(280_000);
    const { id, health, ack } = await probeWhileAmplifying(server, 'amplify', body);
    // Probed while it ran, not only after.
    expect(health.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...health)).toBeLessThan(HEALTH_BUDGET_MS);
    expect(Math.max(...ack)).toBeLessThan(ACK_BUDGET_MS);

    const e = await getExecution(server, id);
    expect(e).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect(await storedRecordBytes(server, id)).toBeLessThanOrEqual(4 * MiB);
    const loop = e.steps[0];
    expect(loop.iterationCount).toBe(2_060);
    // The loop's output, 2 060 copies of the customer: its size only.
    expect(loop.output).toEqual({
      $omitted: 'too large for the execution record',
      bytes: expect.any(Number),
    });
    expect(loop.output.bytes).toBeGreaterThan(2_060 * 130_000);
    // The first iterations' outputs are kept whole, the later ones as markers; every record is there.
    const outputs = loop.iterations.map((it: { steps: { output: unknown }[] }) => it.steps[0]!.output);
    expect(outputs).toHaveLength(100);
    expect(outputs[0].customer).toHaveLength(130_000);
    expect(outputs[99]).toMatchObject({ $omitted: 'too large for the execution record' });
  }, 120_000);
});

describe('on SQLite', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
    await createActiveWorkflow(server, {
      name: 'light',
      trigger: { path: 'light' },
      steps: [{ name: 'shape', type: 'set', fields: { n: '{{ body.n }}' } }],
    });
    await createActiveWorkflow(server, amplifier('amplify'));
    await createActiveWorkflow(server, amplifier('amplify-last', { mode: 'lastStep', timeoutMs: 60_000 }));
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('a 667 KB request (870 MB of record) runs once and succeeds', async () => {
    const body = amplifyingBody(7_700);
    expect(body.length).toBeGreaterThan(660_000);
    const { id, health, ack } = await probeWhileAmplifying(server, 'amplify', body);
    expect(Math.max(...health)).toBeLessThan(HEALTH_BUDGET_MS);
    expect(Math.max(...ack)).toBeLessThan(ACK_BUDGET_MS);
    const e = await getExecution(server, id);
    expect(e).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect(e.steps[0].output.bytes).toBeGreaterThan(7_700 * 130_000);
    expect(await storedRecordBytes(server, id)).toBeLessThanOrEqual(4 * MiB);
  }, 120_000);

  it('a lastStep caller of an output too large for the record gets output_too_large, with the size', async () => {
    const res = await post(server, 'amplify-last', amplifyingBody(2_000));
    expect(res.status).toBe(500);
    const body = (await res.json()) as { code: string; message: string; executionId: string };
    expect(body).toMatchObject({ code: 'output_too_large', executionId: expect.any(String) });
    expect(body.message).toMatch(/answer \(\d+ bytes\)/);
    expect((await getExecution(server, body.executionId)).status).toBe('succeeded');
  }, 60_000);

  it('a small request that amplifies is not written on the event loop: its record is bounded too', async () => {
    // 58 KB: small enough to run before its commit, but 400 copies of 30 KB make 12 MB of record.
    const body = amplifyingBody(400, 30_000);
    expect(body.length).toBeLessThan(64 * 1024);
    const { id, health } = await probeWhileAmplifying(server, 'amplify', body);
    expect(Math.max(...health)).toBeLessThan(HEALTH_BUDGET_MS);
    const e = await getExecution(server, id);
    expect(e.status).toBe('succeeded');
    expect(e.steps[0].output.bytes).toBeGreaterThan(400 * 30_000);
    expect(await storedRecordBytes(server, id)).toBeLessThanOrEqual(4 * MiB);
  }, 60_000);
});
