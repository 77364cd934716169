import { textForm } from './textForm';

export const filterForm = textForm(
  { type: 'filter', label: 'Filter', description: 'Stop the run unless a condition is true' },
  'condition',
  'needs a condition',
);
