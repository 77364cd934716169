/**
 * `store` (SPEC 7f; src/engine/steps/store.ts): one operation on the data store, values kept
 * between executions by key, in this workflow's scope or the global one. Only the fields of the
 * chosen operation are sent (the server refuses the others), so switching the operation back and
 * forth loses nothing typed.
 */
import type { DraftOf, StepForm } from './types';
import { bodyToText, clip, numberish, textToBody, valueToText } from './values';

export const STORE_OPS = ['get', 'set', 'delete', 'increment', 'setIfAbsent'] as const;
export type StoreOp = (typeof STORE_OPS)[number];

export type StoreDraft = DraftOf<
  'store',
  {
    op: StoreOp;
    /** The entry's key (`key` in the stored step; the draft's own `key` is React's). */
    entryKey: string;
    /** set, setIfAbsent: JSON or text, as a body is. */
    value: string;
    /** increment: by how much ('' for 1). */
    by: string;
    /** set, setIfAbsent, increment: the entry's lifetime ('' for none). */
    ttlSeconds: string;
    scope: 'workflow' | 'global';
  }
>;

/** Which fields an operation takes besides its key. */
export const storeTakes = (op: StoreOp) => ({
  value: op === 'set' || op === 'setIfAbsent',
  by: op === 'increment',
  ttlSeconds: op === 'set' || op === 'setIfAbsent' || op === 'increment',
});

const numberText = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : String(v));

export const storeForm: StepForm<StoreDraft> = {
  type: 'store',
  label: 'Data store',
  description: 'Get, set, delete or count a value kept between executions',
  icon: '⛁',
  keys: ['op', 'key', 'value', 'by', 'ttlSeconds', 'scope'],
  read: (step) => ({
    op: STORE_OPS.find((op) => op === step.op) ?? 'get',
    entryKey: valueToText(step.key),
    value: bodyToText(step.value),
    by: numberText(step.by),
    ttlSeconds: numberText(step.ttlSeconds),
    scope: step.scope === 'global' ? 'global' : 'workflow',
  }),
  summary: (d) => `${d.op} ${clip(d.entryKey) || '(no key yet)'}${d.scope === 'global' ? ' (global)' : ''}`,
  write(d, step, at, problems) {
    step.op = d.op;
    step.key = d.entryKey;
    if (d.entryKey.trim() === '') problems.push({ field: `${at}/key`, message: 'needs a key' });
    const takes = storeTakes(d.op);
    if (takes.value) {
      const value = textToBody(d.value);
      if (value === undefined) problems.push({ field: `${at}/value`, message: `needs a value to ${d.op}` });
      step.value = value ?? '';
    }
    const by = numberish(d.by);
    if (takes.by && by !== undefined) step.by = by;
    const ttl = numberish(d.ttlSeconds);
    if (takes.ttlSeconds && ttl !== undefined) step.ttlSeconds = ttl;
    if (d.scope === 'global') step.scope = 'global';
  },
};
