import type { StepForm } from './types';

export const codeForm: StepForm = {
  type: 'code',
  label: 'Code',
  description: 'Run JavaScript in a sandbox; its return value is the output',
  keys: ['source'],
  init(d) {
    d.source =
      '// $input is the previous output; $trigger, $steps, $execution are there too.\nreturn { ...$input };\n';
  },
  write(d, step, at, problems) {
    step.source = d.source;
    if (d.source.trim() === '') problems.push({ field: `${at}/source`, message: 'needs some code' });
  },
};
