/**
 * Concurrency keys seen from outside (SPEC 7d), shared by the SQLite and PostgreSQL tests: a
 * workflow whose `http` step calls a receiver here, which records when each call of each key
 * starts and ends (answering after a small delay, so that calls of one key would overlap if the
 * executor let them). The receiver knows nothing of hookflow: what it records is what a customer's
 * API would see.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

export interface Call {
  key: string;
  seq: number;
  executionId: string;
  updated: number | null;
}

export interface Receiver {
  url: string;
  /** Every call, in the order they started. */
  calls: Call[];
  /** The most calls of one key in flight at once, per key. */
  maxPerKey: Map<string, number>;
  /** The most calls in flight at once, all keys together. */
  maxTotal: number;
  close(): Promise<void>;
}

export async function startReceiver(delayMs: number): Promise<Receiver> {
  const calls: Call[] = [];
  const inFlight = new Map<string, number>();
  const maxPerKey = new Map<string, number>();
  let total = 0;
  const receiver: Receiver = {
    url: '',
    calls,
    maxPerKey,
    maxTotal: 0,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call;
      calls.push(call);
      const n = (inFlight.get(call.key) ?? 0) + 1;
      inFlight.set(call.key, n);
      maxPerKey.set(call.key, Math.max(maxPerKey.get(call.key) ?? 0, n));
      total++;
      receiver.maxTotal = Math.max(receiver.maxTotal, total);
      setTimeout(() => {
        inFlight.set(call.key, (inFlight.get(call.key) ?? 1) - 1);
        total--;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: true }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** The workflow: one `http` step telling the receiver the key, the sequence number and the value. */
export function keyedWorkflow(
  path: string,
  receiverUrl: string,
  concurrency: Record<string, unknown>,
): Record<string, unknown> {
  return {
    name: `keys ${path}`,
    trigger: { path },
    settings: { concurrency },
    steps: [
      {
        name: 'call',
        type: 'http',
        method: 'POST',
        url: `${receiverUrl}/hit`,
        body: '{{ {"key": body.customer, "seq": body.seq, "executionId": $execution.id, "updated": body.updated} }}',
      },
    ],
  };
}

/** `n` shuffled (Fisher–Yates; a fixed seed would hide nothing: any order must hold). */
export function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Sends `keys` × `perKey` events in random arrival: each key's events in its order (a provider
 * sends one customer's events one after another), the keys interleaved at random by `senders`
 * concurrent senders. Resolves with the execution ids per key, in the order they were accepted.
 */
export async function sendInRandomArrival(
  send: (body: unknown) => Promise<string>,
  keys: number,
  perKey: number,
): Promise<Map<string, string[]>> {
  const accepted = new Map<string, string[]>();
  const next = new Map<string, number>();
  // The order in which keys get their next event: each key `perKey` times, shuffled.
  const turns = shuffled(Array.from({ length: keys * perKey }, (_, i) => `cus_${i % keys}`));
  const busy = new Set<string>();
  const senders = Array.from({ length: 10 }, async () => {
    while (turns.length > 0) {
      // The first turn whose key has no event in flight (one key's events go one after another).
      const at = turns.findIndex((k) => !busy.has(k));
      if (at < 0) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      const key = turns.splice(at, 1)[0]!;
      busy.add(key);
      const seq = next.get(key) ?? 0;
      next.set(key, seq + 1);
      const id = await send({ customer: key, seq });
      accepted.set(key, [...(accepted.get(key) ?? []), id]);
      busy.delete(key);
    }
  });
  await Promise.all(senders);
  return accepted;
}

/** What the receiver saw: no two calls of one key at once, each key's calls in accepted order, keys in parallel. */
export function expectFifoPerKey(receiver: Receiver, accepted: Map<string, string[]>, perKey: number): void {
  expect(receiver.calls.length).toBe(accepted.size * perKey);
  for (const [key, ids] of accepted) {
    const seen = receiver.calls.filter((c) => c.key === key);
    expect({ key, max: receiver.maxPerKey.get(key) }).toEqual({ key, max: 1 });
    expect({ key, order: seen.map((c) => c.seq) }).toEqual({
      key,
      order: Array.from({ length: perKey }, (_, i) => i),
    });
    expect(seen.map((c) => c.executionId)).toEqual(ids);
  }
  // Other keys were not held back: calls of different keys were in flight together.
  expect(receiver.maxTotal).toBeGreaterThan(1);
}

/** An API call (the test's token), as both harnesses make it. */
export type Api = (
  method: string,
  route: string,
  body?: unknown,
) => Promise<{
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience, as test/helpers/server.ts ApiResponse
  body: any;
}>;

/** Creates and activates a workflow through `api`; resolves with its id. */
export const activator =
  (api: Api) =>
  async (definition: Record<string, unknown>): Promise<string> => {
    const created = await api('POST', '/api/v1/workflows', definition);
    expect(created.status).toBe(201);
    expect((await api('POST', `/api/v1/workflows/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id;
  };

/** Posts a JSON body to the webhook at `path` of the server at `baseUrl`; resolves with the execution id. */
export const senderTo = (baseUrl: () => string) => (path: string) => async (body: unknown) => {
  const res = await fetch(`${baseUrl()}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return res.headers.get('x-hookflow-execution-id')!;
};

/**
 * The FIFO scenario both harnesses run: a workflow keyed by customer (`concurrency` as given), 20
 * customers × 50 events in random arrival, every call seen by the receiver within `withinMs`, one
 * at a time per key in the order accepted, keys in parallel. Resolves with the workflow's id and
 * the execution ids per key.
 */
export async function expectFifoScenario(
  {
    api,
    send,
    receiver,
  }: { api: Api; send: (path: string) => (body: unknown) => Promise<string>; receiver: Receiver },
  concurrency: Record<string, unknown>,
  withinMs: number,
): Promise<{ workflowId: string; accepted: Map<string, string[]> }> {
  const workflowId = await activator(api)(keyedWorkflow('fifo', receiver.url, concurrency));
  const accepted = await sendInRandomArrival(send('fifo'), 20, 50);
  const seen = () => receiver.calls.filter((c) => c.key.startsWith('cus_')).length;
  for (const end = Date.now() + withinMs; seen() < 1000; await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > end) throw new Error(`the receiver saw ${seen()} of 1000 calls within ${withinMs} ms`);
  expectFifoPerKey(receiver, accepted, 50);
  return { workflowId, accepted };
}

/**
 * Late, older events (newest wins): each key's events are sent one after another, some of them
 * older than one sent before. An event below the highest value of its key that started before it
 * ends `skipped` (superseded, no step run); equal values both run. Which ones is decided by the
 * order accepted alone (each key's executions start in that order), so the expectation is exact.
 */
export const NEWEST_CASES: { key: string; updated: (number | string)[]; runs: boolean[] }[] = [
  { key: 'cus_num', updated: [100, 50, 100, 150, 120, 151], runs: [true, false, true, true, false, true] },
  {
    key: 'cus_iso',
    // Microseconds still order; an offset is the same instant as its UTC form.
    updated: [
      '2026-05-01T10:00:00.000002Z',
      '2026-05-01T10:00:00.000001Z',
      '2026-05-01T12:00:00.000002+02:00',
    ],
    runs: [true, false, true],
  },
];

export async function expectNewestWins(
  api: Api,
  send: (body: unknown) => Promise<string>,
  receiver: Receiver,
  workflowId: string,
): Promise<void> {
  const sent: { id: string; key: string; updated: number | string; runs: boolean }[] = [];
  for (const c of NEWEST_CASES)
    for (const [i, updated] of c.updated.entries()) {
      const id = await send({ customer: c.key, seq: i, updated });
      sent.push({ id, key: c.key, updated, runs: c.runs[i]! });
    }
  const finished = async (id: string) => {
    const res = await api('GET', `/api/v1/executions/${id}`);
    return ['succeeded', 'failed', 'skipped', 'filtered'].includes(res.body.status) ? res.body : undefined;
  };
  for (const s of sent) {
    const deadline = Date.now() + 30_000;
    let e = await finished(s.id);
    while (!e && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      e = await finished(s.id);
    }
    expect({ updated: s.updated, status: e?.status, skipReason: e?.skipReason }).toEqual(
      s.runs
        ? { updated: s.updated, status: 'succeeded', skipReason: null }
        : { updated: s.updated, status: 'skipped', skipReason: 'superseded' },
    );
    expect(e.concurrencyKey).toBe(s.key);
    if (!s.runs) expect(e.steps).toEqual([]);
  }
  // The receiver never saw a superseded event.
  for (const c of NEWEST_CASES)
    expect(receiver.calls.filter((x) => x.key === c.key).map((x) => x.updated)).toEqual(
      c.updated.filter((_, i) => c.runs[i]),
    );
  // The list filters by the new status.
  const skipped = await api('GET', `/api/v1/executions?workflowId=${workflowId}&status=skipped`);
  expect(skipped.status).toBe(200);
  expect(skipped.body.items.map((e: { id: string }) => e.id).sort()).toEqual(
    sent
      .filter((s) => !s.runs)
      .map((s) => s.id)
      .sort(),
  );
}
