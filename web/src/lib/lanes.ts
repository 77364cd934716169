/**
 * The step lists a step holds (an `if`'s Then and Else, a `switch`'s cases and Default, a
 * `forEach`'s loop), as lanes of the flow: each with its pointer suffix, its label and a setter; and
 * the steps of a draft found by key, with the list that holds them.
 */
import type { StepDraft } from './draft';

export interface Lane {
  /** Pointer suffix under the step: `then`, `cases/1/steps`, `default`, `steps`. */
  suffix: string;
  /** Shown above the lane: "Then", "Case 2 = "issues"", "Default". */
  title: string;
  /** The lane in a sentence, for the add control and screen readers: "case 2 of route". */
  place: string;
  steps: StepDraft[];
  /** The step with this lane's list replaced. */
  with: (steps: StepDraft[]) => Partial<StepDraft>;
}

export function lanesOf(step: StepDraft, label: string): Lane[] {
  if (step.type === 'if')
    return [
      {
        suffix: 'then',
        title: 'Then',
        place: `Then of ${label}`,
        steps: step.thenSteps,
        with: (thenSteps) => ({ thenSteps }),
      },
      {
        suffix: 'else',
        title: 'Else',
        place: `Else of ${label}`,
        steps: step.elseSteps,
        with: (elseSteps) => ({ elseSteps }),
      },
    ];
  if (step.type === 'switch')
    return [
      ...step.cases.map(
        (c, i): Lane => ({
          suffix: `cases/${i}/steps`,
          title: `Case ${i + 1}${c.kind === 'equals' ? (c.equals ? ` = ${c.equals}` : '') : c.when ? ` when ${c.when}` : ''}`,
          place: `case ${i + 1} of ${label}`,
          steps: c.steps,
          with: (steps) => ({ cases: step.cases.map((x) => (x.key === c.key ? { ...x, steps } : x)) }),
        }),
      ),
      {
        suffix: 'default',
        title: 'Default',
        place: `the default of ${label}`,
        steps: step.defaultSteps,
        with: (defaultSteps) => ({ defaultSteps }),
      },
    ];
  if (step.type === 'forEach')
    return [
      {
        suffix: 'steps',
        title: 'For each element',
        place: `the loop of ${label}`,
        steps: step.loopSteps,
        with: (loopSteps) => ({ loopSteps }),
      },
    ];
  return [];
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
  const out = steps.map((step, index) => {
    let patch: Partial<StepDraft> | undefined;
    for (const lane of lanesOf(step, step.name || `step ${index + 1}`)) {
      const replaced = replaceList(lane.steps, target, next);
      if (replaced !== lane.steps) patch = { ...patch, ...lane.with(replaced) };
    }
    if (!patch) return step;
    changed = true;
    return { ...step, ...patch };
  });
  return changed ? out : steps;
}
