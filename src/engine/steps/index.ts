/**
 * The step types hookflow knows. Adding a type is adding its file and one line here (then
 * `npm run catalog`, which copies each type's lists, purity and description to
 * src/shared/step-catalog.ts for the model and the UI); everything else (validation on save,
 * rendering, running, recording, nested lists) is generic.
 */
import type { TSchema } from 'typebox';
import { codeStep } from './code.js';
import { emailStep } from './email.js';
import { failStep } from './fail.js';
import { filterStep } from './filter.js';
import { forEachStep, ifStep, switchStep } from './flow.js';
import { httpStep } from './http.js';
import { respondStep } from './respond.js';
import { setStep } from './set.js';
import { sqlStep } from './sql.js';
import { storeStep } from './store.js';
import type { StepType } from './types.js';
import { waitStep } from './wait.js';
import { workflowStep } from './workflow.js';

/** Step types by name: the built-in ones (STEP_TYPES), or those and more (`withStepTypes`). */
export type StepRegistry = ReadonlyMap<string, StepType<TSchema>>;

const TYPES: StepType<TSchema>[] = [
  setStep,
  filterStep,
  httpStep,
  respondStep,
  ifStep,
  switchStep,
  forEachStep,
  codeStep,
  waitStep,
  failStep,
  emailStep,
  sqlStep,
  storeStep,
  workflowStep,
] as unknown as StepType<TSchema>[];

export const STEP_TYPES: StepRegistry = new Map(TYPES.map((t) => [t.type, t]));

export function stepType(type: string, types: StepRegistry = STEP_TYPES): StepType<TSchema> | undefined {
  return types.get(type);
}

/**
 * The built-in types and `more` (a test's own type: Engine's `stepTypes` and validateSteps take
 * the registry), without changing STEP_TYPES.
 */
export function withStepTypes(...more: { type: string }[]): StepRegistry {
  const types = new Map(STEP_TYPES);
  // Each a StepType of its own schema (defineStep), which `run`'s parameter makes unassignable to StepType<TSchema>.
  for (const t of more as StepType<TSchema>[]) types.set(t.type, t);
  return types;
}
