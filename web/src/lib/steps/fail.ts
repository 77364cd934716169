import { textForm } from './textForm';

export const failForm = textForm(
  { type: 'fail', label: 'Fail', description: 'Stop the run as failed, with a message' },
  'message',
  'needs a message',
);
