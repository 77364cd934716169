/**
 * The schedule trigger and Run now over HTTP (SPEC 7f), on a real server with SQLite: validation
 * naming the field, the trigger as the API shows it (nextRunAt, no URLs), ticks starting production
 * executions with their item (a fake clock drives the scheduler), deactivation stopping them,
 * missed ticks after a stop, and Run now through the API and `hookflow run`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/process.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { createWorkflow, eventually, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

const STEPS = [{ name: 'greet', type: 'set', fields: { at: '{{ scheduledAt }}', hello: 'world' } }];

async function executionsOf(server: TestServer, workflowId: string, mode = 'production') {
  const res = await server.api('GET', `/api/v1/executions?workflowId=${workflowId}&mode=${mode}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.items as { id: string; status: string; trigger: Record<string, unknown> }[];
}

const scheduledAts = async (server: TestServer, id: string) =>
  (await executionsOf(server, id)).map((e) => e.trigger.scheduledAt as string).sort();

describe('schedule trigger over HTTP', () => {
  let server: TestServer;
  let clock: FakeClock;
  const settle = () => server.hookflow.scheduler!.settled();

  beforeAll(async () => {
    clock = new FakeClock('2027-01-01T00:00:00Z');
    server = await startTestServer({ clock });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    [{ type: 'schedule' }, '/trigger/cron', 'needs a cron expression'],
    [{ type: 'schedule', cron: '* * * *' }, '/trigger/cron', 'has 4 fields'],
    [{ type: 'schedule', cron: '61 * * * *' }, '/trigger/cron', 'minute'],
    [{ type: 'schedule', cron: '@sometimes' }, '/trigger/cron', 'nickname'],
    [{ type: 'schedule', cron: '* * * * *', timezone: 'Mars/Olympus' }, '/trigger/timezone', 'time zone'],
    [{ type: 'schedule', cron: '* * * * *', missed: 'twice' }, '/trigger/missed', ''],
  ])('refuses %j with a 400 naming %s', async (trigger, field, words) => {
    const res = await server.api('POST', '/api/v1/workflows', { name: 'bad', trigger });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const named = (res.body.fields as { field: string; message: string }[]).find((f) => f.field === field);
    expect(named, JSON.stringify(res.body)).toBeDefined();
    expect(named!.message).toContain(words);
  });

  it.each(['*/5 * * * *', '*/10 * * * * *', '@hourly', '@daily', '0 9 * * MON-FRI'])(
    'takes "%s"',
    async (cron) => {
      const res = await server.api('POST', '/api/v1/workflows', {
        name: 'ok',
        trigger: { type: 'schedule', cron },
      });
      expect(res.status).toBe(201);
    },
  );

  it('shows the schedule (defaults filled in) without URLs, and nextRunAt once active', async () => {
    const wf = await createWorkflow(server, {
      trigger: { type: 'schedule', cron: '0 0 1 1 *', timezone: 'Europe/Berlin' },
      steps: STEPS,
    });
    expect(wf.trigger).toEqual({
      type: 'schedule',
      cron: '0 0 1 1 *',
      timezone: 'Europe/Berlin',
      missed: 'runOnce',
      nextRunAt: null,
    });
    const active = await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    expect(active.status).toBe(200);
    // Midnight of 1 January in Berlin (UTC+1), after the real clock's now.
    const year = new Date().getUTCFullYear();
    expect(active.body.trigger.nextRunAt).toBe(`${year}-12-31T23:00:00.000Z`);
    const listed = await server.api('GET', '/api/v1/workflows?limit=100');
    expect(listed.body.items.find((w: { id: string }) => w.id === wf.id).trigger.nextRunAt).toBe(
      `${year}-12-31T23:00:00.000Z`,
    );
    // A saved draft changes nothing live: nextRunAt is still the published schedule's.
    const saved = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { trigger: { cron: '0 0 1 7 *' } });
    expect(saved.status).toBe(200);
    expect(saved.body.trigger.cron).toBe('0 0 1 7 *');
    expect(saved.body.trigger.nextRunAt).toBe(`${year}-12-31T23:00:00.000Z`);
    const off = await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
    expect(off.body.trigger.nextRunAt).toBeNull();
    // The version history keeps it as it was.
    const v1 = await server.api('GET', `/api/v1/workflows/${wf.id}/versions/1`);
    expect(v1.body.trigger).toMatchObject({ type: 'schedule', cron: '0 0 1 1 *' });
  });

  it('a schedule has no test URL: listening is refused, pointing at Run now', async () => {
    const wf = await createWorkflow(server, { trigger: { type: 'schedule', cron: '@daily' } });
    const res = await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {});
    expect(res.status).toBe(400);
    expect(res.body.hint).toContain('Run now');
  });

  it('a webhook workflow becomes a schedule by PATCH, and back (with a new path)', async () => {
    const wf = await createWorkflow(server, { trigger: { path: 'was-a-hook' } });
    const patched = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      trigger: { type: 'schedule', cron: '@hourly' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.trigger).toEqual({
      type: 'schedule',
      cron: '@hourly',
      timezone: 'UTC',
      missed: 'runOnce',
      nextRunAt: null,
    });
    const back = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { trigger: { type: 'webhook' } });
    expect(back.status).toBe(200);
    expect(back.body.trigger.type).toBe('webhook');
    expect(back.body.trigger.methods).toEqual(['POST']);
    expect(back.body.trigger.productionUrl).toContain('/webhook/');
  });

  it('each tick starts one production execution with its item; deactivating stops them', async () => {
    clock.jump('2027-01-01T10:00:00Z');
    const wf = await createWorkflow(server, {
      trigger: { type: 'schedule', cron: '*/10 * * * * *' },
      steps: STEPS,
    });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    await clock.advanceTo('2027-01-01T10:00:35Z', settle);
    expect(await scheduledAts(server, wf.id)).toEqual([
      '2027-01-01T10:00:10.000Z',
      '2027-01-01T10:00:20.000Z',
      '2027-01-01T10:00:30.000Z',
    ]);
    const runs = await eventually(async () => {
      const items = await executionsOf(server, wf.id);
      return items.every((e) => e.status === 'succeeded') && items;
    });
    const first = (await server.api('GET', `/api/v1/executions/${runs.at(-1)!.id}`)).body;
    expect(first.trigger).toEqual({
      scheduledAt: '2027-01-01T10:00:10.000Z',
      firedAt: '2027-01-01T10:00:10.000Z',
      executionMode: 'production',
    });
    expect(first.steps[0].output).toEqual({ at: '2027-01-01T10:00:10.000Z', hello: 'world' });

    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`)).status).toBe(200);
    await clock.advanceTo('2027-01-01T10:01:30Z', settle);
    expect(await scheduledAts(server, wf.id)).toHaveLength(3);

    // Activated again later: nothing of the time it was off is "missed"; it starts from now.
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    await clock.advanceTo('2027-01-01T10:01:45Z', settle);
    expect((await scheduledAts(server, wf.id)).slice(3)).toEqual(['2027-01-01T10:01:40.000Z']);
    await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
  });

  it('publishing a new cron takes effect at once', async () => {
    clock.jump('2027-01-01T11:00:00Z');
    const wf = await createWorkflow(server, {
      trigger: { type: 'schedule', cron: '0 * * * *' },
      steps: STEPS,
    });
    await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { trigger: { cron: '*/15 * * * * *' } });
    // The draft alone changes nothing.
    await clock.advanceTo('2027-01-01T11:00:20Z', settle);
    expect(await scheduledAts(server, wf.id)).toEqual([]);
    await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    await clock.advanceTo('2027-01-01T11:00:46Z', settle);
    expect(await scheduledAts(server, wf.id)).toEqual([
      '2027-01-01T11:00:30.000Z',
      '2027-01-01T11:00:45.000Z',
    ]);
    await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
  });
});

describe('ticks missed while the server was stopped', () => {
  it.each([
    ['runOnce', ['2027-02-01T00:01:00.000Z', '2027-02-01T00:02:00.000Z', '2027-02-01T00:07:00.000Z']],
    ['skip', ['2027-02-01T00:01:00.000Z', '2027-02-01T00:02:00.000Z']],
  ] as const)('%s', async (missed, expected) => {
    const dataDir = tempDir();
    const clock = new FakeClock('2027-02-01T00:00:00Z');
    const first = await startTestServer({ dataDir, clock });
    const wf = await createWorkflow(first, { trigger: { type: 'schedule', cron: '* * * * *', missed } });
    await first.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    await clock.advanceTo('2027-02-01T00:02:30Z', () => first.hookflow.scheduler!.settled());
    await first.close();
    // Stopped from 00:02:30 to 00:07:20: the ticks 00:03 … 00:07 were missed.
    clock.jump('2027-02-01T00:07:20Z');
    const second = await startTestServer({ dataDir, clock });
    try {
      await second.hookflow.scheduler!.settled();
      expect(await scheduledAts(second, wf.id)).toEqual(expected);
      const catchUp = (await executionsOf(second, wf.id)).find(
        (e) => e.trigger.scheduledAt === expected.at(-1),
      );
      if (missed === 'runOnce') expect(catchUp!.trigger.firedAt).toBe('2027-02-01T00:07:20.000Z');
      await clock.advanceTo('2027-02-01T00:08:00Z', () => second.hookflow.scheduler!.settled());
      expect((await scheduledAts(second, wf.id)).at(-1)).toBe('2027-02-01T00:08:00.000Z');
    } finally {
      await second.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('Run now', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const finished = (id: string) =>
    eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      return ['succeeded', 'failed', 'filtered'].includes(e.status) && e;
    });

  it('runs the draft in test mode with the item given', async () => {
    const wf = await createWorkflow(server, {
      steps: [{ name: 'double', type: 'set', fields: { n: '{{ body.n * 2 }}' } }],
    });
    // A draft saved after publishing: Run now runs the draft.
    await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      steps: [{ name: 'triple', type: 'set', fields: { n: '{{ body.n * 3 }}' } }],
    });
    const res = await server.api('POST', `/api/v1/workflows/${wf.id}/run`, { item: { body: { n: 7 } } });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body)).toEqual(['executionId']);
    const e = await finished(res.body.executionId);
    expect(e).toMatchObject({
      mode: 'test',
      status: 'succeeded',
      workflowVersion: 2,
      trigger: { body: { n: 7 } },
    });
    expect(e.steps[0]).toMatchObject({ name: 'triple', output: { n: 21 } });
  });

  it("without an item: the newest test event's item, else {}", async () => {
    const wf = await createWorkflow(server, {
      trigger: { path: 'run-now-events' },
      steps: [{ name: 'echo', type: 'set', fields: { got: '{{ $ }}' } }],
    });
    const none = await server.api('POST', `/api/v1/workflows/${wf.id}/run`);
    expect(none.status).toBe(202);
    expect((await finished(none.body.executionId)).trigger).toEqual({});

    await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, { keepListening: true });
    for (const n of [1, 2]) {
      const call = await fetch(`${server.url}/webhook-test/run-now-events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n }),
      });
      expect(call.status).toBe(200);
    }
    const fromEvent = await server.api('POST', `/api/v1/workflows/${wf.id}/run`, {});
    const e = await finished(fromEvent.body.executionId);
    expect(e.trigger.body).toEqual({ n: 2 });
    expect(e.trigger.executionMode).toBe('test');
  });

  it('a schedule workflow runs now too; unknown workflow 404, bad item 400', async () => {
    const wf = await createWorkflow(server, { trigger: { type: 'schedule', cron: '@daily' }, steps: STEPS });
    const res = await server.api('POST', `/api/v1/workflows/${wf.id}/run`, {
      item: { scheduledAt: '2027-01-01T00:00:00.000Z' },
    });
    expect(res.status).toBe(202);
    expect((await finished(res.body.executionId)).steps[0].output.at).toBe('2027-01-01T00:00:00.000Z');
    expect((await server.api('POST', '/api/v1/workflows/nope/run', {})).status).toBe(404);
    const bad = await server.api('POST', `/api/v1/workflows/${wf.id}/run`, { item: [1, 2] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('hookflow run prints the execution id; --wait follows it to its end', async () => {
    const wf = await createWorkflow(server, {
      steps: [{ name: 'check', type: 'filter', condition: '{{ body.ok = true }}' }],
    });
    const dir = tempDir();
    const item = path.join(dir, 'item.json');
    fs.writeFileSync(item, JSON.stringify({ body: { ok: true } }));
    const env = { HOOKFLOW_URL: server.url, HOOKFLOW_TOKEN: server.token };
    const ran = await runCli(['run', wf.id, '--item', item], env);
    expect(ran.code, ran.stderr).toBe(0);
    const id = ran.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await finished(id)).trigger).toEqual({ body: { ok: true } });

    const waited = await runCli(['run', wf.id, '--item', item, '--wait'], env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stderr).toContain('succeeded');

    const failing = await createWorkflow(server, { steps: [{ name: 'boom', type: 'fail', message: 'no' }] });
    const failed = await runCli(['run', failing.id, '--wait'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('failed');

    fs.writeFileSync(item, '[1]');
    const notObject = await runCli(['run', wf.id, '--item', item], env);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('JSON object');
    const unknown = await runCli(['run', 'no-such-workflow'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no-such-workflow');
  });
});
