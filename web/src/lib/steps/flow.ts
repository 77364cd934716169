/**
 * The steps that hold steps (SPEC 7b; src/engine/steps/flow.ts): `if`, `switch`, `forEach`. Their
 * drafts keep the nested lists under the stored step's field names, where step-catalog.ts says
 * they are (lib/lanes.ts finds them there).
 */
import type { DraftOf, StepDraft, StepForm } from './types';
import { bodyToText, clip, conditionSummary, newKey, requiredText, textToBody, valueToText } from './values';

export type IfDraft = DraftOf<'if', { condition: string; then: StepDraft[]; else: StepDraft[] }>;

/** One `switch` case: `equals` (a JSON value, as text) or `when` (a condition), and its steps. */
export interface CaseDraft {
  key: string;
  kind: 'equals' | 'when';
  equals: string;
  when: string;
  steps: StepDraft[];
}

export type SwitchDraft = DraftOf<'switch', { value: string; cases: CaseDraft[]; default: StepDraft[] }>;

export type ForEachDraft = DraftOf<'forEach', { items: string; steps: StepDraft[] }>;

export function newCase(kind: CaseDraft['kind'] = 'equals'): CaseDraft {
  return { key: newKey(), kind, equals: '', when: '', steps: [] };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const ifForm: StepForm<IfDraft> = {
  type: 'if',
  label: 'If',
  description: 'Run one list of steps when a condition is true, another when it is not',
  icon: '◇',
  keys: ['condition', 'then', 'else'],
  read: (step, readList) => ({
    condition: valueToText(step.condition),
    then: readList(step.then),
    else: readList(step.else),
  }),
  summary: (d) => conditionSummary(d.condition),
  lane: (_d, suffix, label) =>
    suffix === 'then'
      ? { title: 'Then', place: `Then of ${label}` }
      : { title: 'Else', place: `Else of ${label}` },
  write(d, step, at, problems, writeList) {
    requiredText(d, step, 'condition', at, problems, 'needs a condition');
    step.then = writeList(d.then, `${at}/then`);
    // An empty `else` and none do the same (the step outputs its input): sent only when it has steps.
    if (d.else.length > 0) step.else = writeList(d.else, `${at}/else`);
  },
};

export const switchForm: StepForm<SwitchDraft> = {
  type: 'switch',
  label: 'Switch',
  description: 'Route by a value: run the steps of the first matching case',
  icon: '⇉',
  keys: ['value', 'cases', 'default'],
  read: (step, readList) => ({
    value: valueToText(step.value),
    cases: Array.isArray(step.cases)
      ? step.cases.map((value): CaseDraft => {
          const c = isRecord(value) ? value : {};
          const when = Object.hasOwn(c, 'when');
          return {
            key: newKey(),
            kind: when ? 'when' : 'equals',
            equals: when ? '' : bodyToText(c.equals),
            when: when ? valueToText(c.when) : '',
            steps: readList(c.steps),
          };
        })
      : [],
    default: readList(step.default),
  }),
  start: () => ({ cases: [newCase()] }),
  summary: (d) =>
    `On ${clip(d.value) || '(no value yet)'} · ${d.cases.length} case${d.cases.length === 1 ? '' : 's'}`,
  lane(d, suffix, label) {
    const i = Number(/^cases\/(\d+)\/steps$/.exec(suffix)?.[1] ?? Number.NaN);
    const c = d.cases[i];
    if (!c) return { title: 'Default', place: `the default of ${label}` };
    const test = c.kind === 'equals' ? (c.equals ? ` = ${c.equals}` : '') : c.when ? ` when ${c.when}` : '';
    return { title: `Case ${i + 1}${test}`, place: `case ${i + 1} of ${label}` };
  },
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
    if (d.default.length > 0) step.default = writeList(d.default, `${at}/default`);
  },
};

export const forEachForm: StepForm<ForEachDraft> = {
  type: 'forEach',
  label: 'For each',
  description: 'Run steps once per element of a list, with $item and $index',
  icon: '↻',
  keys: ['items', 'steps'],
  read: (step, readList) => ({ items: valueToText(step.items), steps: readList(step.steps) }),
  summary: (d) => `Each of ${clip(d.items) || '(no list yet)'}`,
  lane: (_d, _suffix, label) => ({ title: 'For each element', place: `the loop of ${label}` }),
  write(d, step, at, problems, writeList) {
    requiredText(d, step, 'items', at, problems, 'needs the list to go through, e.g. {{ body.lines }}');
    step.steps = writeList(d.steps, `${at}/steps`);
  },
};
