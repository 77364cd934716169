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
