/** The steps that hold steps (SPEC 7b; src/engine/steps/flow.ts): `if`, `switch`, `forEach`. */
import type { StepForm } from './types';
import { requiredText, textToBody } from './values';

export const ifForm: StepForm = {
  type: 'if',
  label: 'If',
  description: 'Run one list of steps when a condition is true, another when it is not',
  keys: ['condition', 'then', 'else'],
  lists: (d) => [d.thenSteps, d.elseSteps],
  write(d, step, at, problems, writeList) {
    requiredText(d, step, 'condition', at, problems, 'needs a condition');
    step.then = writeList(d.thenSteps, `${at}/then`);
    // An empty `else` and none do the same (the step outputs its input): sent only when it has steps.
    if (d.elseSteps.length > 0) step.else = writeList(d.elseSteps, `${at}/else`);
  },
};

export const switchForm: StepForm = {
  type: 'switch',
  label: 'Switch',
  description: 'Route by a value: run the steps of the first matching case',
  keys: ['value', 'cases', 'default'],
  lists: (d) => [...d.cases.map((c) => c.steps), d.defaultSteps],
  write(d, step, at, problems, writeList) {
    const usesEquals = d.cases.some((c) => c.kind === 'equals');
    if (d.value.trim() !== '') step.value = d.value;
    else if (usesEquals)
      problems.push({ field: `${at}/value`, message: 'needs a value to compare the cases with' });
    step.cases = d.cases.map((c, i) => {
      const steps = writeList(c.steps, `${at}/cases/${i}/steps`);
      if (c.kind === 'when') {
        if (c.when.trim() === '')
          problems.push({ field: `${at}/cases/${i}/when`, message: 'needs a condition' });
        return { when: c.when, steps };
      }
      // The same rule as a body: JSON text is that value, other text a string as typed.
      const equals = textToBody(c.equals);
      if (equals === undefined)
        problems.push({ field: `${at}/cases/${i}/equals`, message: 'needs a value to compare with' });
      return { equals: equals ?? '', steps };
    });
    if (d.defaultSteps.length > 0) step.default = writeList(d.defaultSteps, `${at}/default`);
  },
};

export const forEachForm: StepForm = {
  type: 'forEach',
  label: 'For each',
  description: 'Run steps once per element of a list, with $item and $index',
  keys: ['items', 'steps'],
  lists: (d) => [d.loopSteps],
  write(d, step, at, problems, writeList) {
    requiredText(d, step, 'items', at, problems, 'needs the list to go through, e.g. {{ body.lines }}');
    step.steps = writeList(d.loopSteps, `${at}/steps`);
  },
};
