import { describe, expect, it } from 'vitest';
import { Metrics } from '../src/metrics.js';

async function answered(metrics: Metrics): Promise<Record<string, number>> {
  const { values } = await metrics.webhookRequests.get();
  return Object.fromEntries(values.map((v) => [`${v.labels.mode} ${v.labels.status}`, v.value]));
}

describe('Metrics.webhookAnswered', () => {
  it('counts answered webhook requests by mode and status, as the counter shows them when scraped', async () => {
    const metrics = new Metrics(() => 0);
    for (let i = 0; i < 3; i++) metrics.webhookAnswered('production', 200);
    metrics.webhookAnswered('test', 200);
    metrics.webhookAnswered('production', 404);
    expect(await answered(metrics)).toEqual({ 'production 200': 3, 'test 200': 1, 'production 404': 1 });
    // A second scrape adds nothing new; later requests add only themselves.
    expect(await answered(metrics)).toEqual({ 'production 200': 3, 'test 200': 1, 'production 404': 1 });
    metrics.webhookAnswered('production', 200);
    expect(await answered(metrics)).toEqual({ 'production 200': 4, 'test 200': 1, 'production 404': 1 });
  });

  it('adds to what was counted with inc() directly, and shows in the text exposition', async () => {
    const metrics = new Metrics(() => 0);
    metrics.webhookRequests.inc({ mode: 'production', status: '202' });
    metrics.webhookAnswered('production', 202);
    const text = await metrics.registry.metrics();
    expect(text).toContain('hookflow_webhook_requests_total{mode="production",status="202"} 2');
  });
});

describe('the queue gauges (SPEC 7d)', () => {
  const value = (text: string, name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];

  it('read the backlog once per scrape, and give its age in seconds', async () => {
    let reads = 0;
    const metrics = new Metrics(() => 0, {
      inFlight: () => 7,
      backlog: async () => {
        reads++;
        return { depth: 12, oldestDueAt: new Date(Date.now() - 90_000).toISOString() };
      },
    });
    const text = await metrics.registry.metrics();
    expect(reads).toBe(1);
    expect(value(text, 'hookflow_executions_in_flight')).toBe('7');
    expect(value(text, 'hookflow_queue_depth')).toBe('12');
    expect(Number(value(text, 'hookflow_queue_oldest_age_seconds'))).toBeCloseTo(90, 0);
    await metrics.registry.metrics();
    expect(reads).toBe(2);
  });

  it('show age 0 with nothing due, and NaN (unknown) while the store cannot be read; the scrape is served', async () => {
    let down = false;
    const metrics = new Metrics(() => 0, {
      inFlight: () => 0,
      backlog: async () => {
        if (down) throw new Error('store unavailable');
        return { depth: 0, oldestDueAt: undefined };
      },
    });
    expect(value(await metrics.registry.metrics(), 'hookflow_queue_oldest_age_seconds')).toBe('0');
    down = true;
    const text = await metrics.registry.metrics();
    expect(value(text, 'hookflow_queue_depth')).toBe('Nan');
    expect(value(text, 'hookflow_queue_oldest_age_seconds')).toBe('Nan');
    expect(value(text, 'hookflow_executions_in_flight')).toBe('0');
  });
});
