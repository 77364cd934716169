import type { StepForm } from './types';

export const filterForm: StepForm = {
  type: 'filter',
  label: 'Filter',
  description: 'Stop the run unless a condition is true',
  keys: ['condition'],
  write(d, step, at, problems) {
    step.condition = d.condition;
    if (d.condition.trim() === '') problems.push({ field: `${at}/condition`, message: 'needs a condition' });
  },
};
