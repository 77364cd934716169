/**
 * Schedules, the data store and sub-workflows (SPEC 7f) through the rest of a workflow's life:
 * export and import to another install (`hookflow workflows export|import`, ids kept, so `workflow`
 * steps still name their targets; a target the install lacks is refused at save, naming the step
 * and the id), restoring an old version of a schedule (published, its cron is the live one at
 * once: nextRunAt and the ticks follow it), and retry and replay of a schedule's execution and of
 * a sub-workflow caller (a new child, linked to the new caller), on SQLite and PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextTicks } from '../../src/shared/schedule.js';
import { finishedExecution } from '../engine/int-helpers.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { runCli } from '../helpers/process.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

interface Exported {
  id: string;
  name: string;
  active: boolean;
  trigger: Record<string, unknown>;
  steps: Record<string, unknown>[];
}

const exportAll = async (dataDir: string): Promise<Exported[]> => {
  const ran = await runCli(['workflows', 'export'], { HOOKFLOW_DATA_DIR: dataDir });
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout).items;
};

const importFile = async (dataDir: string, items: unknown[]) => {
  const file = path.join(tempDir(), 'workflows.json');
  fs.writeFileSync(file, JSON.stringify({ items }));
  return runCli(['workflows', 'import', file], { HOOKFLOW_DATA_DIR: dataDir });
};

const runNow = async (server: TestServer, id: string, item: unknown) => {
  const res = await server.api('POST', `/api/v1/workflows/${id}/run`, { item });
  expect(res.status).toBe(202);
  return finishedExecution(server, res.body.executionId);
};

describe('export and import', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('carry a schedule, store steps and a workflow step to another install, where they run as before', async () => {
    const source = await startTestServer();
    servers.push(source);
    const counter = await createWorkflow(source, {
      name: 'count orders',
      steps: [{ name: 'count', type: 'store', op: 'increment', key: '{{ body.counter }}', scope: 'global' }],
    });
    expect((await source.api('POST', `/api/v1/workflows/${counter.id}/publish`)).status).toBe(200);
    const nightly = await createActiveWorkflow(source, {
      name: 'nightly catch-up',
      trigger: { type: 'schedule', cron: '0 3 * * *', timezone: 'Europe/Berlin', missed: 'skip' },
      steps: [
        {
          name: 'first time',
          type: 'store',
          op: 'setIfAbsent',
          key: "{{ 'order:' & body.orderId }}",
          value: '{{ body.orderId }}',
          ttlSeconds: 3600,
        },
        { name: 'tally', type: 'workflow', workflowId: counter.id, input: { counter: 'orders' } },
      ],
    });
    expect(nightly.trigger.nextRunAt).not.toBeNull();

    const exported = await exportAll(source.dataDir);
    const byName = new Map(exported.map((w) => [w.name, w]));
    expect(byName.get('nightly catch-up')).toMatchObject({
      id: nightly.id,
      active: true,
      trigger: { type: 'schedule', cron: '0 3 * * *', timezone: 'Europe/Berlin', missed: 'skip' },
      steps: nightly.steps,
    });
    expect(byName.get('count orders')!.steps).toEqual(counter.steps);

    // The caller first in the file: import puts the workflows its steps run before it.
    const dataDir = tempDir();
    const ran = await importFile(dataDir, [byName.get('nightly catch-up'), byName.get('count orders')]);
    expect(ran.code, ran.stderr).toBe(0);
    const target = await startTestServer({ dataDir });
    servers.push(target);

    const copy = (await target.api('GET', `/api/v1/workflows/${nightly.id}`)).body;
    expect(copy).toMatchObject({ active: true, steps: nightly.steps });
    expect(copy.steps[1].workflowId).toBe(counter.id);
    // Live on the new install at once: its next tick, 03:00 in Berlin.
    const next = nextTicks({ cron: '0 3 * * *', timezone: 'Europe/Berlin' }, 1, new Date())[0]!;
    expect(copy.trigger).toEqual({
      type: 'schedule',
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      missed: 'skip',
      nextRunAt: next.toISOString(),
    });

    const first = await runNow(target, nightly.id, { body: { orderId: 'A1' } });
    expect(first.status).toBe('succeeded');
    expect(first.steps[0].output).toEqual({ set: true, value: 'A1' });
    expect(first.steps[1].output).toEqual({ value: 1 });
    const child = (await target.api('GET', `/api/v1/executions/${first.steps[1].childExecutionId}`)).body;
    expect(child).toMatchObject({ workflowId: counter.id, mode: 'sub', parentExecutionId: first.id });
    const again = await runNow(target, nightly.id, { body: { orderId: 'A1' } });
    expect(again.steps[0].output).toEqual({ set: false, value: 'A1' });
    expect(again.steps[1].output).toEqual({ value: 2 });
  });

  it('refuse a workflow step whose target the install lacks, naming the step and the id (no remap)', async () => {
    const source = await startTestServer();
    servers.push(source);
    const callee = await createWorkflow(source, { name: 'callee', steps: [] });
    const caller = await createWorkflow(source, {
      name: 'caller',
      steps: [{ name: 'call', type: 'workflow', workflowId: callee.id, input: {} }],
    });
    const onlyCaller = (await exportAll(source.dataDir)).filter((w) => w.id === caller.id);

    const dataDir = tempDir();
    const ran = await importFile(dataDir, onlyCaller);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('Could not import "caller"');
    expect(ran.stderr).toContain('/steps/0/workflowId');
    expect(ran.stderr).toContain(`names workflow "${callee.id}", which does not exist`);
    expect(await exportAll(dataDir)).toEqual([]);
  });
});

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('history, retry and replay on $dialect', ({ postgres }) => {
  let server: TestServer;
  const clock = new FakeClock('2027-03-01T00:00:00Z');
  const settle = () => server.hookflow.scheduler!.settled();

  beforeAll(async () => {
    server = await startTestServer({ clock, postgres });
  });
  afterAll(async () => {
    await server.close();
  });

  const ticksOf = async (workflowId: string) => {
    const res = await server.api(
      'GET',
      `/api/v1/executions?workflowId=${workflowId}&mode=production&limit=100`,
    );
    return (res.body.items as { id: string; workflowVersion: number; trigger: { scheduledAt: string } }[])
      .map((e) => ({ id: e.id, version: e.workflowVersion, at: e.trigger.scheduledAt }))
      .sort((a, b) => a.at.localeCompare(b.at));
  };
  const stamp = (marker: string) => [
    { name: 'stamp', type: 'set', fields: { marker, at: '{{ scheduledAt }}' } },
  ];

  let scheduleId: string;

  it('restoring an old version of a schedule: a draft until published, then its cron is live (nextRunAt, ticks)', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'every quarter minute',
      trigger: { type: 'schedule', cron: '*/15 * * * * *' },
      steps: stamp('v1'),
    });
    scheduleId = wf.id;
    const v2 = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      trigger: { cron: '0 0 1 7 *' },
      steps: stamp('v2'),
    });
    expect(v2.body.version).toBe(2);
    const published = await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    const july = nextTicks({ cron: '0 0 1 7 *', timezone: 'UTC' }, 1, new Date())[0]!.toISOString();
    expect(published.body.trigger.nextRunAt).toBe(july);
    await clock.advanceTo('2027-03-01T00:00:40Z', settle);
    expect(await ticksOf(wf.id)).toEqual([]);

    const restored = await server.api('POST', `/api/v1/workflows/${wf.id}/versions/1/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ version: 3, publishedVersion: 2 });
    expect(restored.body.trigger).toMatchObject({ cron: '*/15 * * * * *', nextRunAt: july });
    await clock.advanceTo('2027-03-01T00:00:50Z', settle);
    expect(await ticksOf(wf.id)).toEqual([]);

    const before = new Date();
    const live = await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    const after = new Date();
    expect(live.body.publishedVersion).toBe(3);
    const nextRunAt = Date.parse(live.body.trigger.nextRunAt);
    expect(nextRunAt).toBeGreaterThan(before.getTime());
    expect(nextRunAt).toBeLessThanOrEqual(after.getTime() + 15_000);
    expect(nextRunAt % 15_000).toBe(0);

    await clock.advanceTo('2027-03-01T00:01:16Z', settle);
    expect(await ticksOf(wf.id)).toEqual([
      { id: expect.any(String), version: 3, at: '2027-03-01T00:01:00.000Z' },
      { id: expect.any(String), version: 3, at: '2027-03-01T00:01:15.000Z' },
    ]);
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`)).status).toBe(200);
  });

  it("retrying and replaying a schedule's execution run its tick's item again", async () => {
    const [tick] = await ticksOf(scheduleId);
    const old = await finishedExecution(server, tick!.id);
    expect(old.steps[0].output).toEqual({ marker: 'v1', at: '2027-03-01T00:01:00.000Z' });
    await server.api('PATCH', `/api/v1/workflows/${scheduleId}`, { steps: stamp('v4') });

    const retry = await server.api('POST', `/api/v1/executions/${old.id}/retry`);
    expect(retry.status).toBe(202);
    const retried = await finishedExecution(server, retry.body.executionId);
    expect(retried).toMatchObject({
      retryOf: old.id,
      mode: 'production',
      workflowVersion: 3,
      status: 'succeeded',
    });
    expect(retried.trigger).toEqual(old.trigger);
    expect(retried.steps[0].output).toEqual({ marker: 'v1', at: '2027-03-01T00:01:00.000Z' });

    const replay = await server.api('POST', `/api/v1/executions/${old.id}/replay`, { target: 'draft' });
    expect(replay.status).toBe(202);
    const replayed = await finishedExecution(server, replay.body.executionId);
    expect(replayed).toMatchObject({ mode: 'test', workflowVersion: 4, status: 'succeeded' });
    expect(replayed.trigger).toEqual(old.trigger);
    expect(replayed.steps[0].output).toEqual({ marker: 'v4', at: '2027-03-01T00:01:00.000Z' });
  });

  it('retrying and replaying a sub-workflow caller start a new child, linked to the new caller', async () => {
    const callee = await createWorkflow(server, {
      name: 'flaky callee',
      steps: [{ name: 'boom', type: 'fail', message: 'not yet' }],
    });
    await server.api('POST', `/api/v1/workflows/${callee.id}/publish`);
    const caller = await createActiveWorkflow(server, {
      name: 'calls flaky',
      trigger: { path: 'calls-flaky' },
      steps: [
        { name: 'call', type: 'workflow', workflowId: callee.id, input: '{{ body }}' },
        { name: 'after', type: 'set', fields: { got: '{{ $.n }}' } },
      ],
    });
    const res = await fetch(`${server.url}/webhook/calls-flaky`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 5 }),
    });
    const failed = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('not yet');
    const firstChild = failed.steps[0].childExecutionId as string;

    await server.api('PATCH', `/api/v1/workflows/${callee.id}`, {
      steps: [{ name: 'ok', type: 'set', fields: { n: '{{ body.n * 10 }}' } }],
    });
    await server.api('POST', `/api/v1/workflows/${callee.id}/publish`);

    const childOf = async (parent: { id: string; steps: { childExecutionId?: string }[] }) => {
      const id = parent.steps[0]!.childExecutionId!;
      expect(id).not.toBe(firstChild);
      return eventually(async () => {
        const c = (await server.api('GET', `/api/v1/executions/${id}`)).body;
        return c.status === 'succeeded' && c;
      });
    };

    const retry = await server.api('POST', `/api/v1/executions/${failed.id}/retry`);
    const retried = await finishedExecution(server, retry.body.executionId);
    expect(retried).toMatchObject({ retryOf: failed.id, status: 'succeeded', mode: 'production' });
    expect(retried.steps[1].output).toEqual({ got: 50 });
    expect(await childOf(retried)).toMatchObject({
      mode: 'sub',
      workflowId: callee.id,
      workflowVersion: 2,
      parentExecutionId: retried.id,
      trigger: { body: { n: 5 }, parent: { executionId: retried.id, workflowId: caller.id, step: 'call' } },
    });

    const replay = await server.api('POST', `/api/v1/executions/${failed.id}/replay`);
    const replayed = await finishedExecution(server, replay.body.executionId);
    expect(replayed).toMatchObject({ status: 'succeeded', mode: 'production' });
    expect((await childOf(replayed)).parentExecutionId).toBe(replayed.id);
    // The first child keeps its link to the first caller.
    expect((await server.api('GET', `/api/v1/executions/${firstChild}`)).body.parentExecutionId).toBe(
      failed.id,
    );
  });
});
