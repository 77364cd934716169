import type { StepForm } from './types';
import { type RequiredTextKey, requiredText } from './values';

/**
 * The form of a step type configured by one text it cannot run without (filter: a condition, fail:
 * a message, code: the source): that key is all it edits, and a blank one is a problem at it.
 */
export function textForm(
  about: Pick<StepForm, 'type' | 'label' | 'description' | 'start'>,
  key: RequiredTextKey,
  problem: string,
): StepForm {
  return {
    ...about,
    keys: [key],
    write(d, step, at, problems) {
      requiredText(d, step, key, at, problems, problem);
    },
  };
}
