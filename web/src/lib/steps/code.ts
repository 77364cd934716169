import { textForm } from './textForm';
import type { DraftOf } from './types';
import { firstLine } from './values';

export type CodeDraft = DraftOf<'code', { source: string }>;

export const codeForm = textForm(
  {
    type: 'code',
    label: 'Code',
    description: 'Run JavaScript in a sandbox; its return value is the output',
    icon: '{ }',
    start: () => ({
      source:
        '// $input is the previous output; $trigger, $steps, $execution are there too.\nreturn { ...$input };\n',
    }),
    summary: (source) => firstLine(source) || 'No code yet',
  },
  'source',
  'needs some code',
);
