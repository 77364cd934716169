/**
 * The step types hookflow knows. Adding a type is adding its file and one line here; everything
 * else (validation on save, rendering, running, recording) is generic.
 */
import type { TSchema } from 'typebox';
import { codeStep } from './code.js';
import { failStep } from './fail.js';
import { filterStep } from './filter.js';
import { forEachStep, ifStep, switchStep } from './flow.js';
import { httpStep } from './http.js';
import { respondStep } from './respond.js';
import { setStep } from './set.js';
import type { StepType } from './types.js';
import { waitStep } from './wait.js';

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
] as unknown as StepType<TSchema>[];

export const STEP_TYPES: ReadonlyMap<string, StepType<TSchema>> = new Map(TYPES.map((t) => [t.type, t]));

export function stepType(type: string): StepType<TSchema> | undefined {
  return STEP_TYPES.get(type);
}
