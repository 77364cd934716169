import { textForm } from './textForm';

export const codeForm = textForm(
  {
    type: 'code',
    label: 'Code',
    description: 'Run JavaScript in a sandbox; its return value is the output',
    start: () => ({
      source:
        '// $input is the previous output; $trigger, $steps, $execution are there too.\nreturn { ...$input };\n',
    }),
  },
  'source',
  'needs some code',
);
