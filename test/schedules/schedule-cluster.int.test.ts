/**
 * Distributed mode (SPEC 7f): a 1-second schedule with three scheduling processes (`hookflow
 * worker`) and one `hookflow webhook` for the API, on one PostgreSQL. Every tick starts exactly one
 * execution: the stored executions' scheduledAt values are one second apart with no gap and no
 * double, for 20 ticks and more; deactivating stops them on every process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster, within } from '../helpers/cluster.js';

const TICKS = 20;

describe('a 1-second schedule on three processes sharing PostgreSQL', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({ webhooks: 1, workers: 3 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  const scheduledAts = async (workflowId: string): Promise<string[]> => {
    const { rows } = await cluster.sql.query<{ trigger: string }>(
      'select trigger from executions where workflow_id = $1',
      [workflowId],
    );
    return rows.map((r) => (JSON.parse(r.trigger) as { scheduledAt: string }).scheduledAt).sort();
  };

  it(`runs exactly once per tick for ${TICKS} ticks, and stops everywhere when deactivated`, async () => {
    const api = (method: string, route: string, body?: unknown) =>
      cluster.api(cluster.webhooks[0]!, method, `/api/v1${route}`, body);
    const created = await api('POST', '/workflows', {
      name: 'every second',
      trigger: { type: 'schedule', cron: '* * * * * *' },
      steps: [{ name: 'note', type: 'set', fields: { at: '{{ scheduledAt }}' } }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const activated = await api('POST', `/workflows/${id}/activate`);
    expect(activated.status).toBe(200);
    expect(Date.parse(activated.body.trigger.nextRunAt)).toBeGreaterThan(Date.now() - 1000);

    await within(60_000, async () => (await scheduledAts(id)).length >= TICKS + 2, 200);
    const off = await api('POST', `/workflows/${id}/deactivate`);
    expect(off.status).toBe(200);
    expect(off.body.trigger.nextRunAt).toBeNull();
    const atDeactivation = await scheduledAts(id);

    // No double: each scheduledAt once. No gap: each one second after the one before.
    expect(new Set(atDeactivation).size).toBe(atDeactivation.length);
    const steps = atDeactivation.slice(1).map((t, i) => Date.parse(t) - Date.parse(atDeactivation[i]!));
    expect(
      steps.every((ms) => ms === 1000),
      JSON.stringify(atDeactivation),
    ).toBe(true);
    const { rows: claims } = await cluster.sql.query<{ n: string }>(
      'select count(*) as n from schedule_ticks where workflow_id = $1',
      [id],
    );
    expect(Number(claims[0]!.n)).toBe(atDeactivation.length);

    // Every execution runs, in production mode.
    await within(60_000, async () => {
      const { rows } = await cluster.sql.query<{ n: string }>(
        `select count(*) as n from executions where workflow_id = $1 and status = 'succeeded' and mode = 'production'`,
        [id],
      );
      return Number(rows[0]!.n) === atDeactivation.length;
    });

    // Another schedule ticking three times on: meanwhile the deactivated one started nothing more.
    const other = await api('POST', '/workflows', {
      name: 'witness',
      trigger: { type: 'schedule', cron: '* * * * * *' },
    });
    await api('POST', `/workflows/${other.body.id}/activate`);
    await within(30_000, async () => (await scheduledAts(other.body.id)).length >= 3, 200);
    expect(await scheduledAts(id)).toEqual(atDeactivation);
    await api('POST', `/workflows/${other.body.id}/deactivate`);
  }, 180_000);
});
