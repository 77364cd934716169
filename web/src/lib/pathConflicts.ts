/**
 * Whether another active workflow already serves this workflow's method+path. The
 * server refuses that for an active workflow (409 path_conflict, on save, publish and activate);
 * an inactive one may be saved there, and the editor warns at once instead of at Activate.
 * Production URLs belong to *published* triggers, so an active workflow whose draft is ahead is
 * compared by its published version. Same path rules as the server (src/webhooks/path.ts).
 */
import { api } from '../api';
import { pathShape } from '../../../src/shared/path';
import type { Trigger, Workflow } from '../types';
import { listAllWorkflows } from './workflows';

export interface PathConflict {
  id: string;
  name: string;
  methods: string[];
  path: string;
}

/** The methods two triggers share on the same path shape; empty when they do not meet. */
export function sharedMethods(a: Pick<Trigger, 'path' | 'methods'>, b: Pick<Trigger, 'path' | 'methods'>) {
  if (pathShape(a.path) !== pathShape(b.path)) return [];
  return a.methods.filter((m) => b.methods.includes(m));
}

export async function findPathConflict(workflow: Workflow): Promise<PathConflict | null> {
  // A schedule (SPEC 7f) has no path to share.
  if (workflow.trigger.type === 'schedule') return null;
  for (const other of await listAllWorkflows()) {
    if (other.id === workflow.id || !other.active || other.publishedVersion === null) continue;
    const trigger =
      other.publishedVersion === other.version
        ? other.trigger
        : (
            await api<{ trigger: Trigger }>(
              'GET',
              `/workflows/${encodeURIComponent(other.id)}/versions/${other.publishedVersion}`,
            )
          ).trigger;
    if (trigger.type === 'schedule') continue;
    const methods = sharedMethods(workflow.trigger, trigger);
    if (methods.length > 0) return { id: other.id, name: other.name, methods, path: trigger.path };
  }
  return null;
}
