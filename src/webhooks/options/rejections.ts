/**
 * The last refused calls of each trigger (FIELD-NOTES 15: auth failures must not be invisible):
 * when, which code, the method and caller address — never the body or credentials. Kept in the
 * store, so every process of a distributed setup lists the same ones and they survive
 * a restart; the totals are in the metrics.
 *
 * Refusals are what a stranger can cause at will (a flood of bad signatures), so recording one
 * must cost the request nothing and the store little: `record` only buffers it in memory, and a
 * timer writes the buffer once a second in one transaction, at most PER_WORKFLOW per workflow
 * and MAX_PENDING in all per flush (the newest win; the rest are counted in the metrics only).
 * `list` shows the buffered ones too, so a refusal is listed at once by the process that refused it.
 *
 * Production refusals are also counted per workflow, minute and code (`refusal_counts`, every one
 * of them, not only the rows kept): the trigger health's rejection rate and refusals by code
 * (src/health). The counts go in the same flush.
 *
 * Retention: per workflow the newest KEEP_PER_WORKFLOW rows are kept (pruned as each flush
 * writes that workflow's rows), and rows older than 7 days (RETENTION_MS) are deleted once a
 * minute. A deleted workflow's rows go with it (store/workflows.ts).
 */
import type { Logger } from 'pino';
import { newId } from '../../ids.js';
import { type Rejection, rejectionsRepo } from '../../store/rejections.js';
import { triggerHealthRepo } from '../../store/trigger-health.js';
import type { Store } from '../../store/store.js';

export type { Rejection };

/** How many the API lists per workflow, and how many one flush writes per workflow. */
const PER_WORKFLOW = 50;
/** Buffered refusals (all workflows) between two flushes; beyond it the oldest are dropped. */
const MAX_PENDING = 2_000;
/** Rows kept per workflow (the list shows PER_WORKFLOW of them). */
const KEEP_PER_WORKFLOW = 200;
const RETENTION_MS = 7 * 86_400_000;
const FLUSH_MS = 1_000;
const SWEEP_MS = 60_000;

export class Rejections {
  readonly #store: Store | undefined;
  readonly #log: Logger | undefined;
  /** Newest last, with their ids (time-ordered). */
  #pending: { id: string; workflowId: string; rejection: Rejection }[] = [];
  /** Production refusals not written yet: `<workflow id> <minute> <code>` → count. */
  #counts = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #sweptAt = 0;

  /** Without a store (unit tests, tools) they stay in memory only. */
  constructor({ store, log }: { store?: Store; log?: Logger } = {}) {
    this.#store = store;
    this.#log = log;
  }

  record(workflowId: string, rejection: Rejection): void {
    this.#pending.push({ id: newId(), workflowId, rejection });
    if (rejection.mode === 'production') {
      const key = `${workflowId} ${rejection.at.slice(0, 16)} ${rejection.code}`;
      this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    }
    if (this.#pending.length > MAX_PENDING) this.#pending.splice(0, this.#pending.length - MAX_PENDING);
    if (this.#store && !this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.flush();
      }, FLUSH_MS);
      this.#timer.unref();
    }
  }

  /** Newest first: those waiting to be written, then the stored ones. */
  async list(workflowId: string): Promise<Rejection[]> {
    const buffered: Rejection[] = [];
    for (let i = this.#pending.length - 1; i >= 0 && buffered.length < PER_WORKFLOW; i--) {
      const p = this.#pending[i]!;
      if (p.workflowId === workflowId) buffered.push(p.rejection);
    }
    if (!this.#store || buffered.length >= PER_WORKFLOW) return buffered;
    const rows = await rejectionsRepo.list(this.#store.db, workflowId, PER_WORKFLOW - buffered.length);
    return [...buffered, ...rows];
  }

  /** Writes what is buffered (and, once a minute, deletes rows past the retention). */
  flush(): Promise<void> {
    if (!this.#store) return Promise.resolve();
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const store = this.#store!;
    const batch = this.#pending;
    this.#pending = [];
    const counts = [...this.#counts].map(([key, count]) => {
      const [workflow_id, minute, code] = key.split(' ') as [string, string, string];
      return { workflow_id, minute, code, count };
    });
    this.#counts = new Map();
    // The newest PER_WORKFLOW of each workflow.
    const byWorkflow = new Map<string, typeof batch>();
    for (let i = batch.length - 1; i >= 0; i--) {
      const p = batch[i]!;
      const list = byWorkflow.get(p.workflowId) ?? [];
      if (list.length < PER_WORKFLOW) list.push(p);
      byWorkflow.set(p.workflowId, list);
    }
    const sweep = Date.now() - this.#sweptAt >= SWEEP_MS;
    if (byWorkflow.size === 0 && counts.length === 0 && !sweep) return;
    try {
      await store.transaction(async (trx) => {
        for (const [workflowId, list] of byWorkflow) {
          await rejectionsRepo.insert(
            trx,
            list.map((p) => ({ id: p.id, workflow_id: workflowId, ...p.rejection })),
          );
          await rejectionsRepo.keepNewest(trx, workflowId, KEEP_PER_WORKFLOW);
        }
        await triggerHealthRepo.addRefusals(trx, counts);
        if (sweep) {
          const before = new Date(Date.now() - RETENTION_MS).toISOString();
          await rejectionsRepo.deleteBefore(trx, before);
          await triggerHealthRepo.deleteRefusalsBefore(trx, before.slice(0, 16));
        }
      });
      if (sweep) this.#sweptAt = Date.now();
    } catch (err) {
      // Refusals are a diagnostic: losing a batch while the store is out is acceptable, and the
      // metrics still counted them.
      this.#log?.warn({ err, dropped: batch.length }, 'recording refused webhook calls failed');
    }
  }

  /** Stop the timer and write what is buffered (shutdown). */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
