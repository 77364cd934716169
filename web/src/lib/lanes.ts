/**
 * The step lists a step holds (an `if`'s Then and Else, a `switch`'s cases and Default, a
 * `forEach`'s loop), as lanes of the flow: where they are comes from src/shared/step-catalog.ts
 * (a draft keeps them under the stored step's field names), what they are called from the step
 * type's registry entry. Also the steps of a draft found by key, with the list that holds them.
 */
import { catalogLists } from '../../../src/shared/step-catalog';
import { stepLists } from '../../../src/shared/step-lists';
import { formFor } from './steps';
import type { StepDraft } from './steps/types';

export interface Lane {
  /** Pointer suffix under the step: `then`, `cases/1/steps`, `default`, `steps`. */
  suffix: string;
  /** Shown above the lane: "Then", "Case 2 = "issues"", "Default". */
  title: string;
  /** The lane in a sentence, for the add control and screen readers: "case 2 of route". */
  place: string;
  steps: StepDraft[];
}

/** The nested step lists of a step's draft, in the order its type declares them. */
export function nestedLists(step: StepDraft): StepDraft[][] {
  return stepLists(step, catalogLists(step.type)).map((l) => l.steps as StepDraft[]);
}

export function lanesOf(step: StepDraft, label: string): Lane[] {
  const form = formFor(step.type);
  return stepLists(step, catalogLists(step.type)).map((l) => {
    const suffix = l.field.slice(1);
    const named = form?.lane?.(step, suffix, label) ?? { title: suffix, place: `${suffix} of ${label}` };
    return { suffix, ...named, steps: l.steps as StepDraft[] };
  });
}

/** A copy of `value` with the value at `segments` (a path inside it) replaced; containers copied. */
function replaceAt(value: unknown, segments: string[], next: unknown): unknown {
  if (segments.length === 0) return next;
  const [head, ...rest] = segments as [string, ...string[]];
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[Number(head)] = replaceAt(copy[Number(head)], rest, next);
    return copy;
  }
  const record = value as Record<string, unknown>;
  return { ...record, [head]: replaceAt(record[head], rest, next) };
}

export interface Found {
  step: StepDraft;
  /** JSON pointer of the step. */
  at: string;
  /** Its list and its place in it. */
  list: StepDraft[];
  index: number;
  /** The nested list it is in (“case 1 of route”), or undefined at the top level. */
  place: string | undefined;
}

/** Every step of the list, depth first, with its pointer. */
export function allSteps(steps: StepDraft[], at = '/steps', place?: string): Found[] {
  const out: Found[] = [];
  steps.forEach((step, index) => {
    const here = `${at}/${index}`;
    out.push({ step, at: here, list: steps, index, place });
    for (const lane of lanesOf(step, step.name || `step ${index + 1}`))
      out.push(...allSteps(lane.steps, `${here}/${lane.suffix}`, lane.place));
  });
  return out;
}

export function findStep(steps: StepDraft[], key: string | undefined): Found | undefined {
  return key === undefined ? undefined : allSteps(steps).find((f) => f.step.key === key);
}

/** The steps with one list (the top level or a nested one, found by identity) replaced by `next`. */
export function replaceList(steps: StepDraft[], target: StepDraft[], next: StepDraft[]): StepDraft[] {
  if (steps === target) return next;
  let changed = false;
  const out = steps.map((step) => {
    let updated = step;
    for (const l of stepLists(step, catalogLists(step.type))) {
      const list = l.steps as StepDraft[];
      const replaced = replaceList(list, target, next);
      if (replaced !== list) updated = replaceAt(updated, l.field.slice(1).split('/'), replaced) as StepDraft;
    }
    if (updated !== step) changed = true;
    return updated;
  });
  return changed ? out : steps;
}
