/**
 * The trigger item's fields as the field picker offers them: the learned schema's fields (or the
 * captured request's when nothing is learned yet), request data before request details, with the
 * objects and lists that hold them.
 */
import type { PickerField } from '../components/FieldPicker';
import type { LearnedField, TriggerItem } from '../types';
import { flattenValue } from './flatten';
import { typeOf } from './format';

/** `base.expr`, or `base.(expr)` when expr is not a plain path. */
export function under(base: string, expression: string): string {
  if (expression === '$') return base;
  return /^[A-Za-z_`][^$]*$/.test(expression) ? `${base}.${expression}` : `${base}.(${expression})`;
}

const DATA_PARTS = ['body', 'query', 'params', 'files'];

export type TriggerField = Omit<PickerField, 'insert'> & { expression: string };

/**
 * The learned fields (leaves and lists of scalars), with the objects and lists of the request on
 * screen that hold them put before their first field: a forEach needs a list, and a body may take
 * a whole object. Those inside a list (`body.lines[0]`) are left out: the learned paths speak of
 * every element (`body.lines[].sku`).
 */
function withContainers(
  learned: LearnedField[],
  item: TriggerItem | undefined,
): Omit<TriggerField, 'group'>[] {
  const leaves = learned.map((f) => ({
    label: f.path,
    expression: f.expression,
    type: f.type,
    example: f.example,
  }));
  const known = new Set(leaves.map((f) => f.label));
  const containers = flattenValue(item ?? {}, 500, { containers: true })
    .filter((r) => r.value !== null && typeof r.value === 'object' && !r.path.includes('['))
    .filter((r) => !known.has(r.path))
    .map((r) => ({ label: r.path, expression: r.expression, type: typeOf(r.value), example: r.value }));
  const placed = new Set<string>();
  const out: Omit<TriggerField, 'group'>[] = [];
  for (const f of leaves) {
    for (const c of containers)
      if (!placed.has(c.label) && (f.label.startsWith(`${c.label}.`) || f.label.startsWith(`${c.label}[`))) {
        placed.add(c.label);
        out.push(c);
      }
    out.push(f);
  }
  return [...out, ...containers.filter((c) => !placed.has(c.label))];
}

export function triggerFields(learned: LearnedField[], item: TriggerItem | undefined): TriggerField[] {
  const list =
    learned.length > 0
      ? withContainers(learned, item)
      : flattenValue(item ?? {}, 500, { containers: true }).map((r) => ({
          label: r.path,
          expression: r.expression,
          type: typeOf(r.value),
          example: r.value,
        }));
  const rank = (label: string) => {
    const head = label.split(/[.[]/)[0]!;
    const i = DATA_PARTS.indexOf(head);
    return i === -1 ? (head === 'headers' ? 6 : 5) : i;
  };
  return list
    .map((f, i) => ({ ...f, i }))
    .sort((a, b) => rank(a.label) - rank(b.label) || a.i - b.i)
    .map(({ i: _i, ...f }) => ({
      ...f,
      group: DATA_PARTS.includes(f.label.split(/[.[]/)[0]!) ? 'Request data' : 'Request details',
    }));
}
