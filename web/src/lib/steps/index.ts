/** The step types the editor has a form for, in the order the "Add a step" buttons list them. */
import { codeForm } from './code';
import { emailForm } from './email';
import { failForm } from './fail';
import { filterForm } from './filter';
import { forEachForm, ifForm, switchForm } from './flow';
import { httpForm } from './http';
import { respondForm } from './respond';
import { setForm } from './set';
import { sqlForm } from './sql';
import type { StepForm } from './types';
import { waitForm } from './wait';

export const STEP_FORMS: readonly StepForm[] = [
  setForm,
  filterForm,
  httpForm,
  emailForm,
  respondForm,
  ifForm,
  switchForm,
  forEachForm,
  codeForm,
  waitForm,
  failForm,
  sqlForm,
];

/** An own-property lookup: a type named "constructor" or "toString" has no form, like any other. */
const BY_TYPE = new Map(STEP_FORMS.map((f) => [f.type, f]));

export function formFor(type: string): StepForm | undefined {
  return BY_TYPE.get(type);
}
