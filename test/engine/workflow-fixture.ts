import type { Step, Workflow } from '../../src/model/workflow.js';

/**
 * A workflow around `steps` for running the engine directly: ids `wf-<prefix>-1`, `-2` … (the
 * engine caches compiled workflows by id and version, so each call gets its own).
 */
export function workflowFactory(prefix: string): (steps: Record<string, unknown>[]) => Workflow {
  let n = 0;
  return (steps) =>
    ({
      id: `wf-${prefix}-${++n}`,
      name: 'test',
      active: true,
      version: 1,
      publishedVersion: 1,
      trigger: {} as Workflow['trigger'],
      steps: steps as Step[],
      settings: {},
      createdAt: '',
      updatedAt: '',
    }) as Workflow;
}
