/**
 * Prometheus metrics of one hookflow process (SPEC 8 `/metrics`). A registry per instance, not
 * prom-client's global one, so several servers in one test process do not collide.
 */
import client from 'prom-client';

interface AnsweredCount {
  labels: { mode: string; status: string };
  count: number;
  /** Part of count already added to the counter. */
  reported: number;
}

export class Metrics {
  readonly registry = new client.Registry();
  /** mode -> status code -> count. */
  readonly #answered = new Map<string, Map<number, AnsweredCount>>();
  /**
   * Webhook requests answered, counted per request in plain numbers (webhookAnswered) and handed to
   * the counter when it is scraped. prom-client's inc() hashes and validates the label object on every
   * call, ~200 ns; a cached `counter.labels(...)` child does the same (its inc is that inc, bound to the
   * labels), ~230 ns; the plain count costs ~8 ns. Calling `webhookRequests.inc(...)` directly still works.
   */
  readonly webhookRequests = new client.Counter({
    name: 'hookflow_webhook_requests_total',
    help: 'Webhook requests answered, by mode and status code',
    labelNames: ['mode', 'status'] as const,
    registers: [this.registry],
    collect: () => this.#reportAnswered(),
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

  /** Count one answered webhook request (hookflow_webhook_requests_total). */
  webhookAnswered(mode: string, status: number): void {
    let byStatus = this.#answered.get(mode);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#answered.set(mode, byStatus);
    }
    const slot = byStatus.get(status);
    if (slot === undefined)
      byStatus.set(status, { labels: { mode, status: String(status) }, count: 1, reported: 0 });
    else slot.count++;
  }

  #reportAnswered(): void {
    for (const byStatus of this.#answered.values()) {
      for (const slot of byStatus.values()) {
        if (slot.count === slot.reported) continue;
        this.webhookRequests.inc(slot.labels, slot.count - slot.reported);
        slot.reported = slot.count;
      }
    }
  }
}
