import type { DraftOf, Row, StepForm } from './types';
import { row, rowsFrom, rowsTo } from './values';

export type SetDraft = DraftOf<'set', { fields: Row[]; keepInput: boolean }>;

/** The set step's own check (src/engine/steps/set.ts): no part of a field name may be one of these. */
const RESERVED_FIELD_PARTS = new Set(['__proto__', 'prototype', 'constructor']);

export const setForm: StepForm<SetDraft> = {
  type: 'set',
  label: 'Set fields',
  description: 'Build an item from named fields',
  icon: '✎',
  keys: ['fields', 'keepInput'],
  read: (step) => ({ fields: rowsFrom(step.fields), keepInput: step.keepInput === true }),
  start: () => ({ fields: [row()] }),
  summary: (d) =>
    d.fields.length ? `Sets ${d.fields.map((r) => r.name || '…').join(', ')}` : 'Sets no field yet',
  write(d, step, at, problems) {
    const seen = new Set<string>();
    d.fields.forEach((r, i) => {
      const name = r.name.trim();
      if (name === '' && r.value.trim() !== '')
        problems.push({ field: `${at}/fields/${i}`, message: 'has a value but no field name' });
      if (name !== '' && seen.has(name))
        problems.push({ field: `${at}/fields/${i}`, message: `sets "${name}" twice` });
      if (name.split('.').some((part) => RESERVED_FIELD_PARTS.has(part)))
        problems.push({
          field: `${at}/fields/${i}`,
          message: 'uses a reserved name (__proto__, prototype, constructor)',
        });
      seen.add(name);
    });
    step.fields = rowsTo(d.fields) ?? {};
    if (d.keepInput) step.keepInput = true;
  },
};
