/**
 * The step registry: one entry per step type the editor has a form for (its draft read from and
 * written to the stored step, its defaults, its card's summary, its lanes' names), in the order the
 * "Add a step" buttons list them. Each entry's form component is in pages/editor/steps/index.ts;
 * a type's nested lists are where src/shared/step-catalog.ts says (lib/lanes.ts).
 */
import { codeForm } from './code';
import { emailForm } from './email';
import { failForm } from './fail';
import { filterForm } from './filter';
import { forEachForm, ifForm, switchForm } from './flow';
import { httpForm } from './http';
import { respondForm } from './respond';
import { setForm } from './set';
import { sqlForm } from './sql';
import { storeForm } from './store';
import type { Drafts, FormType, StepDraft, StepForm } from './types';
import { waitForm } from './wait';
import { workflowForm } from './workflow';

/** Every type with a form, by type: a type missing here is a type error. */
const ENTRIES: { [T in FormType]: StepForm<Drafts[T]> } = {
  set: setForm,
  filter: filterForm,
  http: httpForm,
  email: emailForm,
  respond: respondForm,
  if: ifForm,
  switch: switchForm,
  forEach: forEachForm,
  code: codeForm,
  wait: waitForm,
  fail: failForm,
  sql: sqlForm,
  store: storeForm,
  workflow: workflowForm,
};

export const STEP_FORMS: readonly StepForm[] = Object.values(ENTRIES) as StepForm[];

/** An own-property lookup: a type named "constructor" or "toString" has no form, like any other. */
const BY_TYPE = new Map<string, StepForm>(STEP_FORMS.map((f) => [f.type, f]));

export function formFor(type: string): StepForm | undefined {
  return BY_TYPE.get(type);
}

/** Whether the draft is of a type with a form (else it is a RawDraft, its configuration as JSON). */
export function hasForm(d: StepDraft): d is Drafts[FormType] {
  return BY_TYPE.has(d.type);
}
