import { textForm } from './textForm';
import type { DraftOf } from './types';
import { clip } from './values';

export type FailDraft = DraftOf<'fail', { message: string }>;

export const failForm = textForm(
  {
    type: 'fail',
    label: 'Fail',
    description: 'Stop the run as failed, with a message',
    icon: '✕',
    summary: (message) => clip(message) || 'No message yet',
  },
  'message',
  'needs a message',
);
