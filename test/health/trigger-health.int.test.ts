/**
 * Trigger health (SPEC 7g) over real HTTP: silence, rejection spikes and schema drift start the
 * alert workflow once per episode, with the clock driven by the test (`sweep(now)`), and the
 * health report shows calls, refusals and alerts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

const MINUTE = 60_000;

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
])('%s', (_store, postgres) => {
  let server: TestServer;
  let alertWorkflowId: string;
  beforeAll(async () => {
    server = await startTestServer({ postgres });
    // The alert workflow: never activated (alerts run it whatever its state), one step.
    alertWorkflowId = (
      await createWorkflow(server, {
        name: 'on-call',
        trigger: { path: 'alerts-sink' },
        steps: [{ type: 'set', name: 'page', fields: { kind: '{{ alert.kind }}' } }],
      })
    ).id;
  });
  afterAll(async () => {
    await server.close();
  });

  /** The alert executions started so far, oldest first, once each has run. */
  async function alertRuns(kind?: string) {
    const rows = await server.hookflow.store.db
      .selectFrom('executions')
      .select(['id', 'mode', 'status', 'trigger'])
      .where('workflow_id', '=', alertWorkflowId)
      .orderBy('id')
      .execute();
    return rows
      .map((r) => ({ ...r, item: JSON.parse(r.trigger) as { alert: Record<string, unknown> } }))
      .filter((r) => kind === undefined || r.item.alert.kind === kind);
  }

  async function health(workflowId: string) {
    const res = await server.api('GET', `/api/v1/workflows/${workflowId}/health`);
    expect(res.status).toBe(200);
    return res.body;
  }

  describe('silence', () => {
    it('alerts once per silence, and again after traffic came back and stopped', async () => {
      const wf = await createActiveWorkflow(server, {
        name: 'stripe events',
        trigger: { path: 'health-silence', alerts: { workflowId: alertWorkflowId, silenceMinutes: 60 } },
      });
      const first = await fetch(`${server.url}/webhook/health-silence`, { method: 'POST', body: 'a=1' });
      expect(first.status).toBe(200);
      const t1 = Date.now();

      await server.hookflow.triggerHealth.sweep(t1 + 30 * MINUTE);
      expect(await alertRuns('silence')).toHaveLength(0);
      await server.hookflow.triggerHealth.sweep(t1 + 61 * MINUTE);
      await server.hookflow.triggerHealth.sweep(t1 + 90 * MINUTE);
      const runs = await eventually(async () => {
        const r = await alertRuns('silence');
        return r.length === 1 && r[0]!.status === 'succeeded' && r;
      });
      expect(runs[0]!.mode).toBe('alert');
      expect(runs[0]!.item.alert).toMatchObject({
        kind: 'silence',
        workflowId: wf.id,
        workflowName: 'stripe events',
        details: { silenceMinutes: 60 },
      });

      // Traffic again: the silence is over; the next one is alerted once more.
      expect(
        (await fetch(`${server.url}/webhook/health-silence`, { method: 'POST', body: 'a=2' })).status,
      ).toBe(200);
      const t2 = Date.now();
      await server.hookflow.triggerHealth.sweep(t2 + 10 * MINUTE);
      expect(await alertRuns('silence')).toHaveLength(1);
      await server.hookflow.triggerHealth.sweep(t2 + 61 * MINUTE);
      expect(await alertRuns('silence')).toHaveLength(2);

      const report = await health(wf.id);
      expect(report.callsLast24Hours).toBe(2);
      expect(report.lastCallAt).toBeTruthy();
      expect(report.hours).toHaveLength(24);
      expect(report.alerts.map((a: { kind: string }) => a.kind)).toEqual(['silence', 'silence']);
    });
  });

  describe('rejections', () => {
    it('alerts once when refusals in a minute reach the rate, counting them by code', async () => {
      const wf = await createActiveWorkflow(server, {
        name: 'linear',
        trigger: {
          path: 'health-refusals',
          auth: { type: 'header', name: 'x-token', value: 'right-token' },
          alerts: { workflowId: alertWorkflowId, rejectionsPerMinute: 5 },
        },
      });
      // A rotated secret: every call is refused.
      for (let i = 0; i < 12; i++) {
        const res = await fetch(`${server.url}/webhook/health-refusals`, {
          method: 'POST',
          headers: { 'x-token': 'old-token' },
          body: 'a=1',
        });
        expect(res.status).toBe(401);
      }
      const report = await eventually(async () => {
        const r = await health(wf.id);
        return r.refusalsByCode.unauthorized === 12 && r;
      });
      expect(report.hours.reduce((n: number, h: { refusals: number }) => n + h.refusals, 0)).toBe(12);

      // Swept in the minute after the busiest one (12 refusals may straddle a minute's end).
      const counts = await server.hookflow.store.db
        .selectFrom('refusal_counts')
        .selectAll()
        .where('workflow_id', '=', wf.id)
        .orderBy('count', 'desc')
        .execute();
      const busiest = Date.parse(`${counts[0]!.minute}:00.000Z`);
      await server.hookflow.triggerHealth.sweep(busiest + MINUTE + 1000);
      await server.hookflow.triggerHealth.sweep(busiest + MINUTE + 20_000);
      const runs = await alertRuns('rejections');
      expect(runs).toHaveLength(1);
      expect(runs[0]!.item.alert).toMatchObject({
        kind: 'rejections',
        workflowId: wf.id,
        details: {
          rejectionsPerMinute: 5,
          refusals: Number(counts[0]!.count),
          byCode: { unauthorized: Number(counts[0]!.count) },
        },
      });
    });
  });

  describe('schema drift', () => {
    it("names the field and the published version's steps that read it, once per field and change", async () => {
      const wf = await createWorkflow(server, {
        name: 'orders',
        trigger: { path: 'health-drift', alerts: { workflowId: alertWorkflowId, schemaDrift: true } },
        steps: [
          { type: 'set', name: 'shape', fields: { id: '{{ body.order.id }}', note: '{{ body.note }}' } },
          { type: 'set', name: 'total', fields: { amount: '{{ $trigger.body.amount * 2 }}' } },
        ],
      });
      // Learn the schema from a test capture.
      expect((await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {})).status).toBeLessThan(
        300,
      );
      const sample = { order: { id: 'o-1' }, amount: 5, note: 'x' };
      const captured = await fetch(`${server.url}/webhook-test/health-drift`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sample),
      });
      expect(captured.status).toBe(200);
      expect((await server.api('POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);

      // Live traffic: a matching payload, then one that lost order.id and sends amount as text.
      for (const body of [
        sample,
        { order: {}, amount: '5', note: 'y', extra: true },
        { order: {}, amount: '7', note: 'z' },
      ]) {
        const res = await fetch(`${server.url}/webhook/health-drift`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
      }
      await server.hookflow.triggerHealth.sweep(Date.now());
      await server.hookflow.triggerHealth.sweep(Date.now());
      const runs = await alertRuns('schemaDrift');
      const details = runs
        .map((r) => r.item.alert.details as Record<string, unknown>)
        .sort((a, b) => String(a.field).localeCompare(String(b.field)));
      expect(details).toEqual([
        {
          field: 'body.amount',
          change: 'type',
          expected: 'integer',
          actual: 'string',
          steps: ['total'],
          version: wf.version,
        },
        {
          field: 'body.order.id',
          change: 'missing',
          expected: 'string',
          steps: ['shape'],
          version: wf.version,
        },
      ]);
    });
  });

  describe('trigger.alerts on save', () => {
    it('needs an existing other workflow and at least one condition', async () => {
      const save = (alerts: unknown) =>
        server.api('POST', '/api/v1/workflows', {
          name: 'x',
          trigger: { path: `health-bad-${Math.random()}`, alerts },
        });
      const unknown = await save({ workflowId: 'nope', silenceMinutes: 5 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.fields).toEqual([
        { field: '/trigger/alerts/workflowId', message: 'names workflow "nope", which does not exist' },
      ]);
      const none = await save({ workflowId: alertWorkflowId });
      expect(none.status).toBe(400);
      expect(none.body.fields[0].field).toBe('/trigger/alerts');

      const wf = await createWorkflow(server, { trigger: { path: 'health-self' } });
      const self = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
        trigger: { alerts: { workflowId: wf.id, silenceMinutes: 5 } },
      });
      expect(self.status).toBe(400);
      expect(self.body.fields[0].field).toBe('/trigger/alerts/workflowId');
    });
  });
});
