import type { DraftOf, StepForm } from './types';
import { clip, numberish, requiredText, valueToText } from './values';

/** `wait` (SPEC 7b): by a number of seconds or until a time. */
export type WaitDraft = DraftOf<'wait', { waitBy: 'seconds' | 'until'; seconds: string; until: string }>;

export const waitForm: StepForm<WaitDraft> = {
  type: 'wait',
  label: 'Wait',
  description: 'Pause the run for a while or until a time',
  icon: '◷',
  keys: ['seconds', 'until'],
  read: (step) => ({
    waitBy: step.until !== undefined && step.seconds === undefined ? 'until' : 'seconds',
    seconds: step.seconds === undefined ? '' : String(step.seconds),
    until: valueToText(step.until),
  }),
  start: () => ({ seconds: '60' }),
  summary: (d) => (d.waitBy === 'until' ? `Until ${clip(d.until)}` : `${d.seconds || '?'} s`),
  write(d, step, at, problems) {
    if (d.waitBy === 'until') {
      requiredText(d, step, 'until', at, problems, 'needs a time (ISO-8601, or an expression giving one)');
      return;
    }
    const seconds = numberish(d.seconds);
    if (seconds === undefined)
      problems.push({ field: `${at}/seconds`, message: 'needs a number of seconds' });
    step.seconds = seconds ?? '';
  },
};
