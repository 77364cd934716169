/** How stored records look on the wire (API and CLI export). Secrets never leave as they are. */
import type { StepResult } from '../engine/run.js';
import { withStepInputs } from '../store/executions.js';
import type { ExecutionRow, ScheduleRow } from '../store/schema.js';
import type { TriggerConfig, Workflow } from '../model/workflow.js';
import { nextTick } from '../shared/schedule.js';
import { maskTrigger } from '../workflows/trigger.js';

/**
 * `live`: the workflow's live schedule (store/schedules.ts), when its published trigger is one:
 * `trigger.nextRunAt` is its next tick (null without one: inactive, or not a schedule in production).
 */
export function presentWorkflow(w: Workflow, baseUrl: string, live?: ScheduleRow, now = new Date()) {
  return {
    id: w.id,
    name: w.name,
    active: w.active,
    version: w.version,
    publishedVersion: w.publishedVersion,
    trigger: presentTrigger(w.trigger, baseUrl, live, now),
    steps: w.steps,
    settings: w.settings ?? {},
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

function presentTrigger(trigger: TriggerConfig, baseUrl: string, live: ScheduleRow | undefined, now: Date) {
  if (trigger.type === 'schedule') {
    const next = live ? nextTick(live, now) : null;
    return { ...trigger, nextRunAt: next ? next.toISOString() : null };
  }
  return {
    ...maskTrigger(trigger),
    testUrl: `${baseUrl}/webhook-test/${trigger.path}`,
    productionUrl: `${baseUrl}/webhook/${trigger.path}`,
  };
}

/** One saved version (the history row): its content, secrets masked as on the workflow. */
export function presentWorkflowVersion(w: Workflow, baseUrl: string) {
  const { name, trigger, steps, settings } = presentWorkflow(w, baseUrl);
  return { version: w.version, name, trigger, steps, settings, createdAt: w.updatedAt };
}

export function presentExecution(row: ExecutionRow) {
  const trigger = JSON.parse(row.trigger) as unknown;
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workflowVersion: row.workflow_version,
    mode: row.mode,
    status: row.status,
    trigger,
    // Records as the engine wrote them (engine/run.ts StepResult: nested ones in `steps`/`iterations`).
    steps: withStepInputs(
      JSON.parse(row.steps) as Record<string, unknown>[],
      trigger,
    ) as unknown as StepResult[],
    error: row.error === null ? null : (JSON.parse(row.error) as unknown),
    warnings: row.warnings === null ? [] : (JSON.parse(row.warnings) as string[]),
    attempt: row.attempt,
    retryOf: row.retry_of,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    errorExecutionId: row.error_execution_id ?? null,
    concurrencyKey: row.concurrency_key ?? null,
    skipReason: (row.skip_reason ?? null) as 'superseded' | null,
    parentExecutionId: row.parent_execution_id ?? null,
    // A waiting execution is due again at run_after (a queued one's run_after is internal).
    resumeAt: row.status === 'waiting' ? row.run_after : null,
  };
}
