/**
 * Who owns a method+path (409 `path_conflict`), checked in the store under the paths lock
 * (PATHS_LOCK in service.ts) so two processes cannot claim the same one at once.
 * - Production URLs belong to the *published* triggers of active workflows: that is what the
 *   production registry serves (webhooks/triggers.ts), whatever drafts say.
 * - Test URLs belong to the *draft* triggers of workflows with an open test listener: that is what
 *   the test registry serves.
 */
import { AppError } from '../errors.js';
import type { Db } from '../store/store.js';
import { testListenersRepo } from '../store/test-listeners.js';
import { workflowsRepo } from '../store/workflows.js';
import { pathShape } from '../shared/path.js';
import { isWebhookTrigger, type TriggerConfig, type Workflow } from '../model/workflow.js';

/** 409 when another active workflow's published trigger serves one of the same methods on the same path shape. */
export async function assertPathFree(db: Db, workflow: Pick<Workflow, 'id' | 'trigger'>): Promise<void> {
  // A schedule has no URL to own.
  const mine = workflow.trigger;
  if (!isWebhookTrigger(mine)) return;
  const shape = pathShape(mine.path);
  for (const other of await workflowsRepo.listPublished(db)) {
    if (other.id === workflow.id || !isWebhookTrigger(other.trigger)) continue;
    if (pathShape(other.trigger.path) !== shape) continue;
    const shared = other.trigger.methods.filter((m) => mine.methods.includes(m));
    if (shared.length > 0) {
      throw new AppError(
        'path_conflict',
        `Workflow "${other.name}" (${other.id}) is already active on ${shared.join(', ')} /webhook/${other.trigger.path}.`,
        {
          hint: 'Deactivate that workflow, or give this trigger another path or method.',
          conflictingWorkflow: { id: other.id, name: other.name },
        },
      );
    }
  }
}

/** 409 when another workflow's open test listener holds one of the same methods on the same path shape. */
export async function assertNoListenerConflict(
  db: Db,
  workflow: Pick<Workflow, 'id' | 'trigger'>,
  now: string,
): Promise<void> {
  const mine = workflow.trigger;
  if (!isWebhookTrigger(mine)) return;
  const rows = await testListenersRepo.openElsewhere(db, workflow.id, now);
  const shape = pathShape(mine.path);
  for (const row of rows) {
    const trigger = JSON.parse(row.trigger) as TriggerConfig;
    if (!isWebhookTrigger(trigger) || pathShape(trigger.path) !== shape) continue;
    const shared = trigger.methods.filter((m) => mine.methods.includes(m));
    if (shared.length > 0) {
      throw new AppError(
        'path_conflict',
        `Workflow "${row.name}" (${row.id}) is already listening for test events on ${shared.join(', ')} /webhook-test/${trigger.path}.`,
        {
          hint: 'Stop that listener (or wait for it to expire), or give this trigger another path or method.',
          conflictingWorkflow: { id: row.id, name: row.name },
        },
      );
    }
  }
}

/** Whether the workflow has a test listener open at `now` (its draft then owns its test URL). */
export async function isListening(db: Db, workflowId: string, now: string): Promise<boolean> {
  return testListenersRepo.isListening(db, workflowId, now);
}
