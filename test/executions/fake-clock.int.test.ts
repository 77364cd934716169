/**
 * The executor on a fake clock (src/shared/clock.ts, test/helpers/fake-clock.ts): a one-hour
 * `wait` resumes when the test moves the clock past it, not after a sleep; the worker's waiting
 * timer, the claim of the due row and its lease all read the injected clock.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../helpers/fake-clock.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

const clock = new FakeClock();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ queueClock: clock });
});
afterAll(async () => {
  await server?.close();
});

const execution = async (id: string) => (await server.api('GET', `/api/v1/executions/${id}`)).body;

it('a one-hour wait resumes once the clock has moved past it, and not before', async () => {
  await createActiveWorkflow(server, {
    name: 'hour',
    trigger: { path: 'hour' },
    steps: [
      { name: 'pause', type: 'wait', seconds: 3600 },
      { name: 'after', type: 'set', fields: { done: true } },
    ],
  });
  const res = await fetch(`${server.url}/webhook/hour`, { method: 'POST', body: '{}' });
  expect(res.status).toBe(200);
  const id = res.headers.get('x-hookflow-execution-id')!;
  const waiting = await eventually(async () => {
    const e = await execution(id);
    return e.status === 'waiting' ? e : undefined;
  }, 10_000);
  // The engine parks it an hour from real time; the fake clock started at real time too.
  const due = Date.parse(waiting.resumeAt);
  expect(due - clock.now()).toBeGreaterThan(3_500_000);

  // Half an hour: still waiting, whatever polls and timers that brought.
  await clock.advance(1_800_000);
  await clock.advance(5_000);
  expect((await execution(id)).status).toBe('waiting');

  // Past its time: the worker's waiting timer fires, the queue claims it, the run goes on.
  await clock.advance(due - clock.now() + 1_000);
  const done = await eventually(async () => {
    await clock.advance(1_000);
    const e = await execution(id);
    return e.status === 'succeeded' ? e : undefined;
  }, 10_000);
  expect(done.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
    ['pause', 'succeeded'],
    ['after', 'succeeded'],
  ]);
});
