/**
 * `wait` over HTTP on embedded SQLite (SPEC 7b, issue 18): the execution becomes `waiting` with its
 * resume time, gives its executor slot up (with concurrency 1 another execution runs meanwhile),
 * and resumes at that time from where it stopped: the step before the wait ran once, the one after
 * once. A lastStep call answers 504 at its timeoutMs while the execution waits, and the answer when
 * the wait is shorter. Retry and replay of a waiting execution start a new one; deactivating the
 * workflow does not stop an accepted execution; retention never deletes a waiting one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Downstream, finishedExecution, startDownstream } from '../engine/int-helpers.js';
import {
  createActiveWorkflow,
  eventually,
  json,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

let server: TestServer;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  server = await startTestServer({
    env: { HOOKFLOW_EXECUTOR_CONCURRENCY: '1', HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
  });
});

afterAll(async () => {
  await server?.close();
  await downstream?.close();
});

/** before (an http call) → wait `seconds` → after (an http call): calls show what ran, and how often. */
const waitingWorkflow = (path: string, seconds: number, response?: Record<string, unknown>) =>
  createActiveWorkflow(server, {
    name: path,
    trigger: { path, ...(response ? { response } : {}) },
    steps: [
      {
        name: 'before',
        type: 'http',
        method: 'POST',
        url: `${downstream.url}/echo`,
        body: '{{ {"step": "before", "n": body.n} }}',
      },
      { name: 'pause', type: 'wait', seconds },
      {
        name: 'after',
        type: 'http',
        method: 'POST',
        url: `${downstream.url}/echo`,
        body: '{{ {"step": "after", "n": $steps.before.body.received.n} }}',
      },
    ],
  });

const send = async (path: string, n: number) => {
  const res = await fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n }),
  });
  return { res, id: res.headers.get('x-hookflow-execution-id')! };
};

const execution = async (id: string) => (await server.api('GET', `/api/v1/executions/${id}`)).body;
const waitingNow = (id: string) =>
  eventually(async () => {
    const e = await execution(id);
    return e.status === 'waiting' ? e : undefined;
  }, 10_000);
const calls = (step: string, n: number) =>
  downstream.received.filter(
    (r) => (r.body as { step?: string; n?: number })?.step === step && (r.body as { n?: number }).n === n,
  ).length;

describe('wait', () => {
  it('waits without its slot, shows the resume time, and resumes with the records before and after', async () => {
    await waitingWorkflow('wait-two', 2);
    const quick = await createActiveWorkflow(server, {
      name: 'quick',
      trigger: { path: 'quick' },
      steps: [
        { name: 'call', type: 'http', method: 'POST', url: `${downstream.url}/echo`, body: '{{ body }}' },
      ],
    });
    expect(quick.id).toBeDefined();

    const sent = Date.now();
    const { res, id } = await send('wait-two', 1);
    expect(res.status).toBe(200);
    const waiting = await waitingNow(id);
    expect(waiting.finishedAt).toBeNull();
    const resumeAt = Date.parse(waiting.resumeAt);
    expect(resumeAt).toBeGreaterThanOrEqual(sent + 2_000);
    expect(resumeAt).toBeLessThan(Date.now() + 2_000);
    expect(waiting.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['before', 'succeeded'],
      ['pause', 'waiting'],
    ]);
    // Listed under status=waiting.
    const listed = await server.api('GET', '/api/v1/executions?status=waiting');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((e: { id: string }) => e.id)).toContain(id);

    // With one executor slot, another execution runs while this one waits.
    const other = await send('quick', 2);
    const otherDone = await finishedExecution(server, other.id, 5_000);
    expect(otherDone.status).toBe('succeeded');
    expect((await execution(id)).status).toBe('waiting');

    const done = await finishedExecution(server, id, 15_000);
    expect(done.status).toBe('succeeded');
    expect(done.resumeAt).toBeNull();
    expect(done.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['before', 'succeeded'],
      ['pause', 'succeeded'],
      ['after', 'succeeded'],
    ]);
    // The wait passes its input on; the step after it sees the records from before it.
    expect(done.steps[1].output).toEqual(done.steps[0].output);
    expect(done.steps[2].output.body).toEqual({ received: { step: 'after', n: 1 } });
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(resumeAt);
    expect(calls('before', 1)).toBe(1);
    expect(calls('after', 1)).toBe(1);
  });

  it('a lastStep call answers 504 at its timeoutMs while the execution waits, and the output when it is shorter', async () => {
    await waitingWorkflow('wait-last', 2, { mode: 'lastStep', timeoutMs: 700 });
    const { res, id } = await send('wait-last', 3);
    // Only the timeout answers 504 (a waiting execution taken for finished would answer 200 at once).
    expect(res.status).toBe(504);
    expect((await json(res)).executionId).toBe(id);
    expect((await execution(id)).status).toBe('waiting');
    expect((await finishedExecution(server, id, 15_000)).status).toBe('succeeded');

    await waitingWorkflow('wait-last-ok', 1, { mode: 'lastStep', timeoutMs: 10_000 });
    const ok = await send('wait-last-ok', 4);
    expect(ok.res.status).toBe(200);
    expect((await json(ok.res)).body).toEqual({ received: { step: 'after', n: 4 } });
  });

  it('respondStep: a respond step before the wait answers at once; one after a longer wait answers 504', async () => {
    await createActiveWorkflow(server, {
      name: 'respond-first',
      trigger: { path: 'respond-first', response: { mode: 'respondStep', timeoutMs: 5_000 } },
      steps: [
        { name: 'ack', type: 'respond', status: 202, body: { accepted: '{{ body.n }}' } },
        { name: 'pause', type: 'wait', seconds: 2 },
      ],
    });
    const first = await send('respond-first', 6);
    expect(first.res.status).toBe(202);
    expect(await json(first.res)).toEqual({ accepted: 6 });
    await waitingNow(first.id);

    await createActiveWorkflow(server, {
      name: 'respond-late',
      trigger: { path: 'respond-late', response: { mode: 'respondStep', timeoutMs: 700 } },
      steps: [
        { name: 'pause', type: 'wait', seconds: 2 },
        { name: 'ack', type: 'respond', status: 202, body: { late: true } },
      ],
    });
    const late = await send('respond-late', 7);
    expect(late.res.status).toBe(504);
    expect((await json(late.res)).executionId).toBe(late.id);
    for (const id of [first.id, late.id])
      expect((await finishedExecution(server, id, 15_000)).status).toBe('succeeded');
  });

  it('retry and replay of a waiting execution start new ones; deactivating the workflow lets it finish', async () => {
    const wf = await waitingWorkflow('wait-ops', 2);
    const { id } = await send('wait-ops', 5);
    await waitingNow(id);

    const retried = await server.api('POST', `/api/v1/executions/${id}/retry`);
    expect(retried.status).toBe(202);
    const replayed = await server.api('POST', `/api/v1/executions/${id}/replay`, {});
    expect(replayed.status).toBe(202);
    const deact = await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
    expect(deact.status, JSON.stringify(deact.body)).toBe(200);

    const [original, retry, replay] = await Promise.all(
      [id, retried.body.executionId, replayed.body.executionId].map((e) =>
        finishedExecution(server, e, 20_000),
      ),
    );
    expect(original.status).toBe('succeeded');
    expect(retry).toMatchObject({ status: 'succeeded', retryOf: id });
    expect(replay.status).toBe('succeeded');
    // Three executions of the item, each with one call before and one after its wait.
    expect(calls('before', 5)).toBe(3);
    expect(calls('after', 5)).toBe(3);
  });
});
