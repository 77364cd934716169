/**
 * Every step of a workflow, nested ones included (SPEC 7b: `if` then/else, `switch`
 * cases[].steps/default, `forEach` steps), each with its JSON pointer from the workflow root
 * (`/steps/2/then/0`), so that checks made on save name the field exactly.
 */
import type { Step } from './workflow.js';

export interface PlacedStep {
  step: Step;
  /** JSON pointer of the step, e.g. `/steps/1/cases/0/steps/2`. */
  pointer: string;
}

export function* walkSteps(steps: readonly unknown[], base = '/steps'): Generator<PlacedStep> {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step === null || typeof step !== 'object' || Array.isArray(step)) continue;
    const pointer = `${base}/${i}`;
    const s = step as Step;
    yield { step: s, pointer };
    for (const key of ['then', 'else', 'steps', 'default'] as const) {
      const nested = s[key];
      if (Array.isArray(nested)) yield* walkSteps(nested, `${pointer}/${key}`);
    }
    if (Array.isArray(s.cases)) {
      const cases = s.cases as unknown[];
      for (let c = 0; c < cases.length; c++) {
        const nested = (cases[c] as { steps?: unknown } | null)?.steps;
        if (Array.isArray(nested)) yield* walkSteps(nested, `${pointer}/cases/${c}/steps`);
      }
    }
  }
}

/** The credential ids `http` steps name (SPEC 7c), each with where it is named. */
export function credentialRefs(steps: readonly unknown[]): { id: string; pointer: string }[] {
  const refs: { id: string; pointer: string }[] = [];
  for (const { step, pointer } of walkSteps(steps)) {
    if (step.type === 'http' && typeof step.credential === 'string')
      refs.push({ id: step.credential, pointer: `${pointer}/credential` });
  }
  return refs;
}
