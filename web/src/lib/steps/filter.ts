import { textForm } from './textForm';
import type { DraftOf } from './types';
import { conditionSummary } from './values';

export type FilterDraft = DraftOf<'filter', { condition: string }>;

export const filterForm = textForm(
  {
    type: 'filter',
    label: 'Filter',
    description: 'Stop the run unless a condition is true',
    icon: '▽',
    summary: conditionSummary,
  },
  'condition',
  'needs a condition',
);
