/**
 * What a saved workflow names outside itself must exist (SPEC 7c): the credentials its steps name
 * (nested ones included; of a type the step takes), the workflows its `workflow` steps run (SPEC
 * 7f) or its `wait` steps wait for (SPEC 7g: a webhook workflow), its error workflow and its
 * trigger's alert workflow. Checked on every save (create, PUT, PATCH,
 * restore, import), in the save's transaction; each problem is a FieldError at the exact pointer.
 */
import type { FieldError } from '../errors.js';
import { credentialsRepo } from '../store/credentials.js';
import type { Db } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import { isWebhookTrigger, type Workflow } from '../model/workflow.js';
import { credentialRefs, waitedWorkflowRefs, workflowRefs } from '../model/step-walk.js';
import { stepType } from '../engine/steps/index.js';

export async function checkReferences(db: Db, workflow: Workflow): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const refs = credentialRefs(workflow.steps);
  if (refs.length > 0) {
    const found = new Map(
      (await credentialsRepo.getMany(db, [...new Set(refs.map((r) => r.id))])).map((r) => [r.id, r.type]),
    );
    for (const ref of refs) {
      const type = found.get(ref.id);
      const takes = stepType(ref.stepType)?.credentialTypes;
      if (type === undefined)
        errors.push({
          field: ref.pointer,
          message: `names credential "${ref.id}", which does not exist here (GET /api/v1/credentials lists them; create it, or pick another)`,
        });
      else if (takes && !takes.includes(type))
        errors.push({
          field: ref.pointer,
          message: `names credential "${ref.id}", a ${type} credential; a ${ref.stepType} step takes ${takes.join(', ')} credentials`,
        });
    }
  }
  // Sub-workflows (SPEC 7f): another workflow that exists; never this one (it would call itself
  // until the depth limit).
  for (const ref of workflowRefs(workflow.steps)) {
    if (ref.id === workflow.id)
      errors.push({
        field: ref.pointer,
        message: 'names this workflow itself; a workflow step runs another workflow',
      });
    else if (!(await workflowsRepo.exists(db, ref.id)))
      errors.push({ field: ref.pointer, message: `names workflow "${ref.id}", which does not exist` });
  }
  // Waits for an event (SPEC 7g): on another workflow's webhook requests.
  for (const ref of waitedWorkflowRefs(workflow.steps)) {
    const target = ref.id === workflow.id ? workflow : await workflowsRepo.get(db, ref.id);
    if (!target)
      errors.push({ field: ref.pointer, message: `names workflow "${ref.id}", which does not exist` });
    else if (!isWebhookTrigger(target.trigger))
      errors.push({
        field: ref.pointer,
        message: `names workflow "${target.name}", whose trigger is a schedule; a wait for an event waits for a webhook workflow's requests`,
      });
  }
  const errorWorkflowId = workflow.settings?.errorWorkflowId;
  if (errorWorkflowId !== undefined) {
    if (errorWorkflowId === workflow.id)
      errors.push({
        field: '/settings/errorWorkflowId',
        message: 'names this workflow itself; an error workflow is another workflow, run when this one fails',
      });
    else {
      if (!(await workflowsRepo.exists(db, errorWorkflowId)))
        errors.push({
          field: '/settings/errorWorkflowId',
          message: `names workflow "${errorWorkflowId}", which does not exist`,
        });
    }
  }
  const alertWorkflowId = isWebhookTrigger(workflow.trigger)
    ? workflow.trigger.alerts?.workflowId
    : undefined;
  if (alertWorkflowId !== undefined) {
    if (alertWorkflowId === workflow.id)
      errors.push({
        field: '/trigger/alerts/workflowId',
        message:
          'names this workflow itself; an alert workflow is another workflow, run when this trigger needs attention',
      });
    else if (!(await workflowsRepo.exists(db, alertWorkflowId)))
      errors.push({
        field: '/trigger/alerts/workflowId',
        message: `names workflow "${alertWorkflowId}", which does not exist`,
      });
  }
  return errors;
}
