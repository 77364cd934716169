/**
 * Pure workflows run before their execution is stored (queue/pure-run.ts): the executor runs them
 * in a short slice before the insert, so the execution is already finished — with the same step
 * records, errors and announcements as one run later — when the 2xx arrives.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FORM } from '../engine/int-helpers.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';
import { getExecution } from '../webhooks/webhook-http.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

const post = (path: string, body: string) =>
  fetch(`${server.url}/webhook/${path}`, { method: 'POST', headers: FORM, body });

/** The executions inserted while `fn` runs, with their status as inserted (a spy: every write still happens). */
async function inserted(fn: () => Promise<void>): Promise<{ id: string; status: string }[]> {
  const store = server.hookflow.store;
  const writeHot = store.writeHot;
  const seen: { id: string; status: string }[] = [];
  store.writeHot = async (writes) => {
    const results = await writeHot(writes);
    for (const w of writes) if (w.kind === 'insert') seen.push({ id: w.row.id, status: w.row.status ?? '' });
    return results;
  };
  try {
    await fn();
    return seen;
  } finally {
    store.writeHot = writeHot;
  }
}

it('stores the execution finished, with every step recorded, before answering', async () => {
  await createActiveWorkflow(server, {
    name: 'pure',
    trigger: { path: 'pure' },
    steps: [
      { name: 'shape', type: 'set', fields: { who: '{{ body.name }}', loud: '{{ $uppercase(body.name) }}' } },
      { name: 'only-ada', type: 'filter', condition: '{{ who = "ada" }}' },
      { name: 'greet', type: 'set', keepInput: true, fields: { greeting: '{{ "hi " & loud }}' } },
    ],
  });
  // Each run gets a short slice of wall time; on a loaded machine a run can overrun it and is then
  // stored queued for the executor (pure-run.ts). So send until one request is run before its
  // insert (almost always the first), and check that one.
  let id: string | undefined;
  for (let i = 0; i < 20 && id === undefined; i++) {
    let ada!: Response;
    const rows = await inserted(async () => {
      ada = await post('pure', 'name=ada');
    });
    expect(ada.status).toBe(200);
    const sent = ada.headers.get('x-hookflow-execution-id')!;
    expect(rows.map((r) => r.id)).toEqual([sent]);
    // Run before the insert: the row went into the store finished.
    if (rows[0]!.status === 'succeeded') id = sent;
    else expect(rows[0]!.status).toBe('queued');
  }
  expect(id).toBeDefined();
  const done = await getExecution(server, id!);
  expect(done.status).toBe('succeeded');
  expect(done.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
    ['shape', 'succeeded'],
    ['only-ada', 'succeeded'],
    ['greet', 'succeeded'],
  ]);
  expect(done.steps[2].output).toEqual({ who: 'ada', loud: 'ADA', greeting: 'hi ADA' });
  // The API restores each step's input from the previous output.
  expect(done.steps[1].input).toEqual({ who: 'ada', loud: 'ADA' });
  expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.startedAt));

  const bob = await post('pure', 'name=bob');
  expect((await getExecution(server, bob.headers.get('x-hookflow-execution-id')!)).status).toBe('filtered');
});

it('a failing expression fails the execution, naming step, field and code', async () => {
  await createActiveWorkflow(server, {
    name: 'pure-fails',
    trigger: { path: 'pure-fails' },
    steps: [{ name: 'count', type: 'set', fields: { n: '{{ $number(body.n) }}' } }],
  });
  const res = await post('pure-fails', 'n=not-a-number');
  const failed = await getExecution(server, res.headers.get('x-hookflow-execution-id')!);
  expect(failed.status).toBe('failed');
  expect(failed.error).toMatchObject({ step: 'count', field: '/fields/n', code: 'D3030' });
});

it('a lastStep webhook answers with the output of a workflow run before its commit', async () => {
  await createActiveWorkflow(server, {
    name: 'pure-sync',
    trigger: { path: 'pure-sync', response: { mode: 'lastStep' } },
    steps: [{ name: 'double', type: 'set', fields: { twice: '{{ $number(body.n) * 2 }}' } }],
  });
  const res = await post('pure-sync', 'n=21');
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ twice: 42 });
});

it('runs before the commit while executions wait in the store, under steady load too', async () => {
  const { id: workflowId } = await createActiveWorkflow(server, {
    name: 'steady',
    trigger: { path: 'steady' },
    steps: [{ name: 'echo', type: 'set', fields: { n: '{{ body.n }}' } }],
  });
  const first = await post('steady', 'n=0');
  const firstId = first.headers.get('x-hookflow-execution-id')!;
  // 20 senders, each sending as soon as it is answered, for 3 s. A retry after 0.5 s stores a row
  // queued and tells the executor: a backlog, which pure runs do not wait for. (They did until
  // issue 20: every request meanwhile was stored queued too, and under steady load the backlog
  // never ended; here 0 of 1 100–1 400 rows of the last second ran before their insert.)
  const store = server.hookflow.store;
  const writeHot = store.writeHot;
  const rows: { at: number; status: string }[] = [];
  const started = Date.now();
  let retryId = '';
  store.writeHot = async (writes) => {
    const results = await writeHot(writes);
    for (const w of writes)
      if (w.kind === 'insert' && w.row.workflow_id === workflowId)
        rows.push({ at: Date.now() - started, status: w.row.status ?? '' });
    return results;
  };
  try {
    const retry = (async () => {
      await new Promise((r) => setTimeout(r, 500));
      const res = await server.api('POST', `/api/v1/executions/${firstId}/retry`);
      expect(res.status).toBe(202);
      return res.body.executionId as string;
    })();
    await Promise.all(
      Array.from({ length: 20 }, async (_, k) => {
        for (let i = 0; Date.now() - started < 3_000; i++)
          expect((await post('steady', `n=${k}-${i}`)).status).toBe(200);
      }),
    );
    retryId = await retry;
  } finally {
    store.writeHot = writeHot;
  }
  // After the retry: run before their insert (a run that overruns its slice on a loaded machine
  // is still stored queued), and the retried execution ran too.
  const late = rows.filter((r) => r.at >= 1_000);
  const ranFirst = late.filter((r) => r.status === 'succeeded').length;
  expect(late.length).toBeGreaterThan(50);
  expect(ranFirst / late.length).toBeGreaterThan(0.5);
  await eventually(async () => (await getExecution(server, retryId)).status === 'succeeded');
});
