import type { DraftOf, Own, StepForm } from './types';
import { requiredText, valueToText } from './values';

/**
 * The entry of a step type configured by one text it cannot run without (filter: a condition, fail:
 * a message, code: the source): that key is all it edits, and a blank one is a problem at it.
 */
export function textForm<T extends string, K extends string>(
  about: Pick<StepForm, 'label' | 'description' | 'icon'> & {
    type: T;
    start?(): Partial<Record<K, string>>;
    /** The card's one line, from the text. */
    summary(text: string): string;
  },
  key: K,
  problem: string,
): StepForm<DraftOf<T, Record<K, string>>> {
  type D = DraftOf<T, Record<K, string>>;
  return {
    ...about,
    start: about.start as StepForm<D>['start'],
    keys: [key],
    read: (step) => ({ [key]: valueToText(step[key]) }) as unknown as Own<D>,
    summary: (d) => about.summary(d[key]),
    write(d, step, at, problems) {
      requiredText<Record<string, string>>(d, step, key, at, problems, problem);
    },
  };
}
