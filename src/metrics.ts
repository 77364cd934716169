/**
 * Prometheus metrics of one hookflow process (SPEC 8 `/metrics`). A registry per instance, not
 * prom-client's global one, so several servers in one test process do not collide.
 */
import client from 'prom-client';

export class Metrics {
  readonly registry = new client.Registry();
  readonly webhookRequests = new client.Counter({
    name: 'hookflow_webhook_requests_total',
    help: 'Webhook requests answered, by mode and status code',
    labelNames: ['mode', 'status'] as const,
    registers: [this.registry],
  });
  readonly webhookRejections = new client.Counter({
    name: 'hookflow_webhook_rejections_total',
    help: 'Webhook requests refused, by mode and error code',
    labelNames: ['mode', 'code'] as const,
    registers: [this.registry],
  });
  readonly ingestPending: client.Gauge;

  constructor(pending: () => number) {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'hookflow_' });
    this.ingestPending = new client.Gauge({
      name: 'hookflow_ingest_pending',
      help: 'Accepted webhook requests waiting for their group commit',
      registers: [this.registry],
      collect() {
        this.set(pending());
      },
    });
  }
}
