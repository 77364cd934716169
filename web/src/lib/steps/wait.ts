import type { StepForm } from './types';
import { numberish } from './values';

export const waitForm: StepForm = {
  type: 'wait',
  label: 'Wait',
  description: 'Pause the run for a while or until a time',
  keys: ['seconds', 'until'],
  init(d) {
    d.seconds = '60';
  },
  write(d, step, at, problems) {
    if (d.waitBy === 'until') {
      step.until = d.until;
      if (d.until.trim() === '')
        problems.push({
          field: `${at}/until`,
          message: 'needs a time (ISO-8601, or an expression giving one)',
        });
      return;
    }
    const seconds = numberish(d.seconds);
    if (seconds === undefined)
      problems.push({ field: `${at}/seconds`, message: 'needs a number of seconds' });
    step.seconds = seconds ?? '';
  },
};
