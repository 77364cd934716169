import type { StepForm } from './types';

export const failForm: StepForm = {
  type: 'fail',
  label: 'Fail',
  description: 'Stop the run as failed, with a message',
  keys: ['message'],
  init(d) {
    d.message = '';
  },
  write(d, step, at, problems) {
    step.message = d.message;
    if (d.message.trim() === '') problems.push({ field: `${at}/message`, message: 'needs a message' });
  },
};
