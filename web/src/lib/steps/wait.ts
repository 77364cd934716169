import type { StepForm } from './types';
import { numberish, requiredText } from './values';

export const waitForm: StepForm = {
  type: 'wait',
  label: 'Wait',
  description: 'Pause the run for a while or until a time',
  keys: ['seconds', 'until'],
  start: () => ({ seconds: '60' }),
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
