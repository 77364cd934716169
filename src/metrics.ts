/**
 * Prometheus metrics of one hookflow process (SPEC 8 `/metrics`). A registry per instance, not
 * prom-client's global one, so several servers in one test process do not collide.
 */
import client from 'prom-client';

/** Executions due and not taken by a worker (store/queue.ts `backlog`). */
export interface Backlog {
  depth: number;
  /** The earliest due time among them (ISO-8601 UTC), undefined when there are none. */
  oldestDueAt: string | undefined;
}

/** What the queue gauges read at scrape time (SPEC 7d). */
export interface QueueGauges {
  /** Executions this process runs now, those waiting on the network included (not parked ones). */
  inFlight(): number;
  /** The store's backlog now; one read serves every gauge of a scrape. */
  backlog(): Promise<Backlog>;
}

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
  readonly webhookHandshakes = new client.Counter({
    name: 'hookflow_webhook_handshakes_total',
    help: "Providers' URL checks answered without an execution (SPEC 7g), by provider",
    labelNames: ['mode', 'provider'] as const,
    registers: [this.registry],
  });
  readonly ingestPending: client.Gauge;
  /** The backlog being read for the scrape in progress (both gauges that show it share the read). */
  #backlog: Promise<Backlog> | undefined;

  constructor(pending: () => number, queue?: QueueGauges) {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'hookflow_' });
    this.ingestPending = new client.Gauge({
      name: 'hookflow_ingest_pending',
      help: 'Accepted webhook requests waiting for their group commit',
      registers: [this.registry],
      collect() {
        this.set(pending());
      },
    });
    if (queue) this.#queueGauges(queue);
  }

  /**
   * hookflow_executions_in_flight, hookflow_queue_depth and hookflow_queue_oldest_age_seconds (SPEC
   * 7d), computed when scraped. While the store cannot be read, the two backlog gauges are NaN
   * (unknown) and the rest of the scrape is served.
   */
  #queueGauges(queue: QueueGauges): void {
    const backlog = (): Promise<Backlog | undefined> => {
      this.#backlog ??= queue.backlog().finally(() => {
        this.#backlog = undefined;
      });
      return this.#backlog.catch(() => undefined);
    };
    new client.Gauge({
      name: 'hookflow_executions_in_flight',
      help: 'Executions this process is running, those waiting on an outbound call included',
      registers: [this.registry],
      collect() {
        this.set(queue.inFlight());
      },
    });
    new client.Gauge({
      name: 'hookflow_queue_depth',
      help: 'Executions due and not yet taken by a worker (queued, and waiting ones whose time has come)',
      registers: [this.registry],
      async collect() {
        const b = await backlog();
        this.set(b ? b.depth : Number.NaN);
      },
    });
    new client.Gauge({
      name: 'hookflow_queue_oldest_age_seconds',
      help: 'How long the longest-due execution not yet taken by a worker has been due, 0 when none',
      registers: [this.registry],
      async collect() {
        const b = await backlog();
        const at = b?.oldestDueAt === undefined ? undefined : Date.parse(b.oldestDueAt);
        this.set(!b ? Number.NaN : at === undefined ? 0 : Math.max(0, (Date.now() - at) / 1000));
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
