/**
 * Trigger health (SPEC 7g): for each active workflow whose published trigger sets `alerts`, a
 * sweep (every TRIGGER_HEALTH_SWEEP_MS, on each process with an executor) looks for
 * - silence: no production call accepted for `silenceMinutes` (counted from the last call, or from
 *   the workflow's last change when none is kept);
 * - rejections: at least `rejectionsPerMinute` refusals in the last full minute;
 * - schema drift: production payloads since the last sweep lacking a field an expression of the
 *   published version reads, or carrying it with another type than the learned schema's;
 * and starts the alert workflow (mode `alert`) once per episode. An episode is a row whose key
 * says when it began (the silence's last call; the minute the spike began; the published version,
 * field and change for drift): the insert that opens it succeeds on one process only, so several
 * processes sweeping at once start one alert. A silence ends with the next call (a new key); a
 * spike ends after a minute under the rate; drift re-arms with the next published version.
 *
 * The clock is injected (`now`), so tests drive silences and spikes without waiting for them.
 */
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import { newId, nowIso } from '../ids.js';
import { isWebhookWorkflow, type WebhookWorkflow } from '../model/workflow.js';
import { searchFieldRows } from '../store/execution-search.js';
import { executionsRepo, queuedExecution } from '../store/executions.js';
import { learnedSchemasRepo } from '../store/learned-schemas.js';
import type { Store } from '../store/store.js';
import { type AlertKey, idFloor, type TriggerAlertRow, triggerHealthRepo } from '../store/trigger-health.js';
import { workflowsRepo } from '../store/workflows.js';
import type { LearnedSchema } from '../webhooks/schema/json-schema.js';
import { type Drift, driftOf } from './drift.js';
import { fieldsRead } from './reads.js';

export type AlertKind = 'silence' | 'rejections' | 'schemaDrift';

/** How often alerts are looked for: a silence or a spike is noticed within this much of its start. */
export const TRIGGER_HEALTH_SWEEP_MS = 30_000;
/** Payloads one sweep checks for drift per workflow (the newest are checked first next time). */
const DRIFT_BATCH = 200;
const MINUTE_MS = 60_000;
/** Alert rows kept (health panel history); episodes still going on are kept whatever their age. */
const ALERT_RETENTION_MS = 30 * 86_400_000;

export interface TriggerHealthDeps {
  store: Store;
  bus: Bus;
  log: Logger;
  sweepMs: number;
  now?: () => number;
}

/** The trigger's health as the editor shows it (GET /workflows/:id/health). */
export interface HealthReport {
  lastCallAt: string | null;
  /** Accepted production calls in the last 24 hours (the sum of `hours`). */
  callsLast24Hours: number;
  /** The last 24 hours, oldest first: accepted production calls and refusals per hour. */
  hours: { hour: string; calls: number; refusals: number }[];
  /** Refusals of the last 24 hours by error code. */
  refusalsByCode: Record<string, number>;
  alerts: {
    kind: string;
    since: string;
    firedAt: string;
    lastSeen: string;
    details: unknown;
    executionId: string | null;
  }[];
}

export class TriggerHealth {
  readonly #d: TriggerHealthDeps;
  readonly #now: () => number;
  /** Per workflow: the newest production execution id checked for drift. */
  readonly #driftCursor = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(deps: TriggerHealthDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
  }

  start(): void {
    this.#timer = setInterval(() => void this.sweep().catch(() => {}), this.#d.sweepMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }

  /** One look at every watched trigger; at `now` (ms) when given. Sweeps do not overlap. */
  sweep(now = this.#now()): Promise<void> {
    this.#sweeping ??= this.#sweep(now).finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #sweep(now: number): Promise<void> {
    const db = this.#d.store.db;
    let watched: WebhookWorkflow[];
    try {
      watched = (await workflowsRepo.listPublished(db))
        .filter(isWebhookWorkflow)
        .filter((w) => w.trigger.alerts);
    } catch (err) {
      this.#d.log.warn({ err }, 'trigger health: could not list the watched workflows');
      return;
    }
    for (const workflow of watched) {
      try {
        await this.#silence(workflow, now);
        await this.#rejections(workflow, now);
        await this.#drift(workflow, now);
      } catch (err) {
        this.#d.log.warn({ err, workflowId: workflow.id }, 'trigger health: sweep failed');
      }
    }
    await triggerHealthRepo.deleteAlertsBefore(db, new Date(now - ALERT_RETENTION_MS).toISOString());
  }

  async #silence(workflow: WebhookWorkflow, now: number): Promise<void> {
    const minutes = workflow.trigger.alerts?.silenceMinutes;
    if (!minutes) return;
    const last =
      (await triggerHealthRepo.lastProductionCall(this.#d.store.db, workflow.id)) ?? workflow.updatedAt;
    if (now - Date.parse(last) < minutes * MINUTE_MS) return;
    await this.#fire(workflow, 'silence', last, now, last, {
      silenceMinutes: minutes,
      lastCallAt: last,
    });
  }

  async #rejections(workflow: WebhookWorkflow, now: number): Promise<void> {
    const limit = workflow.trigger.alerts?.rejectionsPerMinute;
    if (!limit) return;
    const db = this.#d.store.db;
    // The last full minute: the one in progress is still being counted.
    const minute = new Date(Math.floor(now / MINUTE_MS) * MINUTE_MS - MINUTE_MS).toISOString().slice(0, 16);
    const rows = (await triggerHealthRepo.refusalsSince(db, workflow.id, minute)).filter(
      (r) => r.minute === minute,
    );
    const total = rows.reduce((sum, r) => sum + r.count, 0);
    if (total < limit) return;
    const byCode = Object.fromEntries(rows.map((r) => [r.code, r.count]));
    const seenAt = new Date(now).toISOString();
    // An episode goes on while each minute passes the rate; one quiet minute ends it.
    const latest = await triggerHealthRepo.latestAlert(db, workflow.id, 'rejections');
    if (latest && Date.parse(latest.last_seen) >= now - 2 * MINUTE_MS) {
      await triggerHealthRepo.touchAlert(db, keyOf(latest), seenAt);
      return;
    }
    await this.#fire(workflow, 'rejections', minute, now, `${minute}:00.000Z`, {
      rejectionsPerMinute: limit,
      minute: `${minute}:00.000Z`,
      refusals: total,
      byCode,
    });
  }

  async #drift(workflow: WebhookWorkflow, now: number): Promise<void> {
    if (!workflow.trigger.alerts?.schemaDrift) return;
    const db = this.#d.store.db;
    // From the previous sweep on; the first sweep of a process looks back one sweep interval.
    const after = this.#driftCursor.get(workflow.id) ?? idFloor(now - this.#d.sweepMs);
    const items = await triggerHealthRepo.productionItemsAfter(db, workflow.id, after, DRIFT_BATCH);
    if (items.length === 0) return;
    this.#driftCursor.set(workflow.id, items.at(-1)!.id);
    const reads = fieldsRead(workflow.steps);
    if (reads.length === 0) return;
    const learnedText = await learnedSchemasRepo.get(db, workflow.id);
    const learned = learnedText ? (JSON.parse(learnedText) as LearnedSchema).jsonSchema : undefined;
    const found = new Map<string, Drift & { at: string }>();
    for (const row of items) {
      if (row.workflow_version !== workflow.version) continue;
      let item: unknown;
      try {
        item = JSON.parse(row.trigger);
      } catch {
        continue;
      }
      for (const d of driftOf(item, reads, learned)) {
        const key = `${d.field}:${d.change}`;
        if (!found.has(key)) found.set(key, { ...d, at: new Date(now).toISOString() });
      }
    }
    for (const [key, d] of found) {
      const { at, ...drift } = d;
      await this.#fire(workflow, 'schemaDrift', `v${workflow.version}:${key}`, now, at, {
        ...drift,
        version: workflow.version,
      });
    }
  }

  /** Opens the episode and, if this process opened it, starts the alert workflow. */
  async #fire(
    workflow: WebhookWorkflow,
    kind: AlertKind,
    episode: string,
    now: number,
    since: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    const alerts = workflow.trigger.alerts!;
    const at = new Date(now).toISOString();
    const key: AlertKey = { workflowId: workflow.id, kind, episode };
    const executionId = newId();
    const opened = await this.#d.store.transaction(async (trx) => {
      const row: TriggerAlertRow = {
        workflow_id: workflow.id,
        kind,
        episode,
        since,
        fired_at: at,
        last_seen: at,
        details: JSON.stringify(details),
        execution_id: null,
      };
      if (!(await triggerHealthRepo.openAlert(trx, row))) return false;
      const target = await workflowsRepo.get(trx, alerts.workflowId);
      if (!target) return true;
      const item = {
        alert: { kind, workflowId: workflow.id, workflowName: workflow.name, since, details },
        receivedAt: at,
      };
      const version = target.publishedVersion ?? target.version;
      const run =
        version === target.version ? target : await workflowsRepo.getVersion(trx, target.id, version);
      await executionsRepo.insert(
        trx,
        queuedExecution({
          id: executionId,
          workflow_id: target.id,
          workflow_version: version,
          mode: 'alert',
          trigger: JSON.stringify(item),
          // Queued now, whatever moment the sweep judged: it is due at once.
          created_at: nowIso(),
        }),
        searchFieldRows({ id: executionId, workflow_id: target.id }, run?.settings?.searchFields, item),
      );
      await triggerHealthRepo.setAlertExecution(trx, key, executionId);
      return true;
    });
    if (!opened) return;
    this.#d.log.info({ workflowId: workflow.id, kind, executionId }, 'trigger alert');
    await this.#d.bus.publish('execution.queued', {});
  }

  /** The health panel's figures for one workflow. */
  async report(workflowId: string, now = this.#now()): Promise<HealthReport> {
    const db = this.#d.store.db;
    const hourMs = 3_600_000;
    const firstHour = Math.floor(now / hourMs) * hourMs - 23 * hourMs;
    const [lastCallAt, calls, refusals, alerts] = await Promise.all([
      triggerHealthRepo.lastProductionCall(db, workflowId),
      triggerHealthRepo.productionCallsByHour(db, workflowId, firstHour),
      triggerHealthRepo.refusalsSince(db, workflowId, new Date(firstHour).toISOString().slice(0, 16)),
      triggerHealthRepo.listAlerts(db, workflowId, 20),
    ]);
    const refusalsByHour = new Map<string, number>();
    const refusalsByCode: Record<string, number> = {};
    for (const r of refusals) {
      const hour = r.minute.slice(0, 13);
      refusalsByHour.set(hour, (refusalsByHour.get(hour) ?? 0) + r.count);
      refusalsByCode[r.code] = (refusalsByCode[r.code] ?? 0) + r.count;
    }
    const hours = Array.from({ length: 24 }, (_, i) => {
      const hour = new Date(firstHour + i * hourMs).toISOString().slice(0, 13);
      return {
        hour: `${hour}:00:00.000Z`,
        calls: calls.get(hour) ?? 0,
        refusals: refusalsByHour.get(hour) ?? 0,
      };
    });
    return {
      lastCallAt: lastCallAt ?? null,
      callsLast24Hours: hours.reduce((sum, h) => sum + h.calls, 0),
      hours,
      refusalsByCode,
      alerts: alerts.map((a) => ({
        kind: a.kind,
        since: a.since,
        firedAt: a.fired_at,
        lastSeen: a.last_seen,
        details: JSON.parse(a.details) as unknown,
        executionId: a.execution_id,
      })),
    };
  }
}

function keyOf(row: TriggerAlertRow): AlertKey {
  return { workflowId: row.workflow_id, kind: row.kind, episode: row.episode };
}
