/**
 * What a saved workflow names outside itself must exist (SPEC 7c): the credentials of its `http`
 * steps (nested ones included) and its error workflow. Checked on every save (create, PUT, PATCH,
 * restore, import), in the save's transaction; each problem is a FieldError at the exact pointer.
 */
import type { FieldError } from '../errors.js';
import { credentialsRepo } from '../store/credentials.js';
import type { Db } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import type { Workflow } from '../model/workflow.js';
import { credentialRefs } from '../model/step-walk.js';

export async function checkReferences(db: Db, workflow: Workflow): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const refs = credentialRefs(workflow.steps);
  if (refs.length > 0) {
    const found = new Set(
      (await credentialsRepo.getMany(db, [...new Set(refs.map((r) => r.id))])).map((r) => r.id),
    );
    for (const ref of refs)
      if (!found.has(ref.id))
        errors.push({
          field: ref.pointer,
          message: `names credential "${ref.id}", which does not exist here (GET /api/v1/credentials lists them; create it, or pick another)`,
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
  return errors;
}
