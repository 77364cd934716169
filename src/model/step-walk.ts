/**
 * Every step of a workflow, nested ones included, where each step type keeps them (its `lists`,
 * from shared/step-catalog.ts: `if` then/else, `switch` cases[].steps/default, `forEach` steps),
 * each with its JSON pointer from the workflow root (`/steps/2/then/0`), so that checks made on
 * save name the field exactly.
 */
import { catalogLists } from '../shared/step-catalog.js';
import { type PlacedStep as Placed, walkStepLists } from '../shared/step-lists.js';
import type { Step } from './workflow.js';

export type PlacedStep = Placed<Step>;

export function walkSteps(steps: readonly unknown[], base = '/steps'): Generator<PlacedStep> {
  return walkStepLists<Step>(steps, catalogLists, base);
}

/** The credential ids steps name (SPEC 7c, 7e: `http`, `email` …), each with where and by which step type. */
export function credentialRefs(
  steps: readonly unknown[],
): { id: string; pointer: string; stepType: string }[] {
  const refs: { id: string; pointer: string; stepType: string }[] = [];
  for (const { step, pointer } of walkSteps(steps)) {
    if (typeof step.credential === 'string')
      refs.push({ id: step.credential, pointer: `${pointer}/credential`, stepType: step.type });
  }
  return refs;
}

/** The workflows `workflow` steps run (SPEC 7f sub-workflows), each with where it is named. */
/** The webhook workflows the `wait` steps for an event wait on (SPEC 7g), each with its pointer. */
export function waitedWorkflowRefs(steps: readonly unknown[]): { id: string; pointer: string }[] {
  const refs: { id: string; pointer: string }[] = [];
  for (const { step, pointer } of walkSteps(steps)) {
    if (step.type === 'wait' && step.for === 'event' && typeof step.workflowId === 'string')
      refs.push({ id: step.workflowId, pointer: `${pointer}/workflowId` });
  }
  return refs;
}

export function workflowRefs(steps: readonly unknown[]): { id: string; pointer: string }[] {
  const refs: { id: string; pointer: string }[] = [];
  for (const { step, pointer } of walkSteps(steps)) {
    if (step.type === 'workflow' && typeof step.workflowId === 'string')
      refs.push({ id: step.workflowId, pointer: `${pointer}/workflowId` });
  }
  return refs;
}
