/**
 * Issue 32, finding 5: a `wait` inside a `forEach` parks once per element, and each park used to
 * write the whole checkpoint again (every element, the outputs so far, the records so far): 400
 * lines of 2 KB wrote 3.2 GB. Now each park writes what it added (engine/checkpoint.ts), so the
 * bytes written over all the parks grow linearly with the lines: 4× the lines, well under 16× the
 * bytes. Over HTTP, through the executor and the store, on SQLite and PostgreSQL.
 *
 * Measured as what the queue hands the store to write for the execution: every string of its
 * completions (records, checkpoint head, checkpoint part), counted as it goes to the store. (Not
 * PostgreSQL's WAL position: the server is shared with other databases, and its WAL is theirs too.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HotWrite, Store } from '../../src/store/store.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';
import { getExecution } from '../webhooks/webhook-http.js';

/** Bytes of every string in `value` (a completion: its JSON texts), one level of nesting deep. */
function stringBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  for (const v of Object.values(value))
    n += typeof v === 'object' ? stringBytes(v) : typeof v === 'string' ? Buffer.byteLength(v) : 0;
  return n;
}

/** Counts, per execution, the bytes of the completions written through `store` from now on. */
function countWrites(store: Store): Map<string, { writes: number; bytes: number }> {
  const counts = new Map<string, { writes: number; bytes: number }>();
  const count = (writes: readonly HotWrite[]) => {
    for (const w of writes) {
      if (w.kind !== 'complete') continue;
      const c = counts.get(w.completion.id) ?? { writes: 0, bytes: 0 };
      c.writes++;
      c.bytes += stringBytes(w.completion);
      counts.set(w.completion.id, c);
    }
  };
  const writeHot = store.writeHot.bind(store);
  const writeHotNow = store.writeHotNow?.bind(store);
  const s = store as { -readonly [K in keyof Store]: Store[K] };
  s.writeHot = (writes) => {
    count(writes);
    return writeHot(writes);
  };
  if (writeHotNow)
    s.writeHotNow = (writes) => {
      const done = writeHotNow(writes);
      if (done) count(writes);
      return done;
    };
  return counts;
}

const body = (lines: number) =>
  JSON.stringify({
    lines: Array.from({ length: lines }, (_, id) => ({ id, text: `${id}:${'x'.repeat(2_000)}` })),
  });

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
])('%s', (_name, postgres) => {
  let server: TestServer;
  let counts: Map<string, { writes: number; bytes: number }>;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
    counts = countWrites(server.hookflow.store);
    await createActiveWorkflow(server, {
      name: 'paced',
      trigger: { path: 'paced' },
      steps: [
        {
          type: 'forEach',
          name: 'lines',
          items: '{{ body.lines }}',
          steps: [
            { type: 'set', name: 'line', fields: { id: '{{ $item.id }}', text: '{{ $item.text }}' } },
            // A millisecond: parks (any time ahead does) and is due again at once.
            { type: 'wait', name: 'pace', seconds: 0.001 },
          ],
        },
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  async function runLoop(lines: number) {
    const res = await fetch(`${server.url}/webhook/paced`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(lines),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-hookflow-execution-id')!;
    // Its status straight from the store: the API's answer (records so far assembled from the
    // checkpoint, the 800 KB item) would take the event loop's time from the run it measures.
    await eventually(async () => {
      const row = await server.hookflow.store.db
        .selectFrom('executions')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return ['succeeded', 'failed'].includes(row.status);
    }, 180_000);
    const done = await getExecution(server, id);
    return { done, written: counts.get(id)! };
  }

  it('a wait inside a loop of 400 lines of 2 KB writes O(n) bytes: 4× the lines, well under 16× the bytes', async () => {
    const small = await runLoop(100);
    const big = await runLoop(400);
    for (const [run, lines] of [
      [small, 100],
      [big, 400],
    ] as const) {
      expect(run.done.status).toBe('succeeded');
      expect(run.done.steps[0].iterationCount).toBe(lines);
      expect(run.done.steps[0].output.map((o: { id: number }) => o.id)).toEqual(
        Array.from({ length: lines }, (_, i) => i),
      );
      // One completion per park, and the last one.
      expect(run.written.writes).toBe(lines + 1);
    }
    const ratio = big.written.bytes / small.written.bytes;
    console.info(
      `${_name}: bytes written over all parks: n=100 ${small.written.bytes}, n=400 ${big.written.bytes} (×${ratio.toFixed(2)})`,
    );
    expect(ratio).toBeLessThan(6);
    // The lines once, about an iteration a park, and the final record (4 MiB at most).
    expect(big.written.bytes).toBeLessThan(16 * 1024 * 1024);
    // Finished: the checkpoint's parts are gone.
    const parts = await server.hookflow.store.db
      .selectFrom('execution_checkpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(parts.n)).toBe(0);
  }, 400_000);
});
