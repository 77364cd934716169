/**
 * Steps at any depth, by JSON pointer (`/steps/1/cases/0/steps/2`), for the editor's field picker:
 * which steps come before a step, and which `forEach` loops it sits in (their `$item` fields).
 */
import { catalogLists } from '../../../src/shared/step-catalog';
import { stepLists } from '../../../src/shared/step-lists';
import type { Step } from '../types';
import { flattenValue } from './flatten';
import { typeOf } from './format';

export interface StepAt {
  at: string;
  step: Step;
  /** The `forEach` steps around it, outermost first. */
  loops: { at: string; step: Step }[];
  /** JSON pointers of the steps that hold it, outermost first. */
  parents: string[];
}

const list = (v: unknown): Step[] =>
  Array.isArray(v)
    ? (v.filter((s) => typeof s === 'object' && s !== null && !Array.isArray(s)) as Step[])
    : [];

/** The nested lists of a step as [pointer suffix, steps], where its type keeps them (shared/step-catalog.ts). */
export function nestedListsOf(step: Step): [string, Step[]][] {
  return stepLists(step, catalogLists(step.type)).map((l): [string, Step[]] => [
    l.field.slice(1),
    list(l.steps),
  ]);
}

/** Every step, depth first in the order they are written (a step before the steps it holds). */
export function walkSteps(
  steps: Step[],
  at = '/steps',
  loops: StepAt['loops'] = [],
  parents: string[] = [],
): StepAt[] {
  const out: StepAt[] = [];
  steps.forEach((step, i) => {
    const here = `${at}/${i}`;
    out.push({ at: here, step, loops, parents });
    const inner = step.type === 'forEach' ? [...loops, { at: here, step }] : loops;
    for (const [suffix, nested] of nestedListsOf(step))
      out.push(...walkSteps(nested, `${here}/${suffix}`, inner, [...parents, here]));
  });
  return out;
}

export interface ItemField {
  label: string;
  expression: string;
  type: string;
  example: unknown;
}

/** `{{ body.lines }}` → `body.lines` (also from `$trigger.body.lines`); undefined for anything else. */
export function plainPath(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^\s*\{\{\s*(.+?)\s*\}\}\s*$/.exec(text);
  if (!m) return undefined;
  const path = m[1]!.replace(/^\$trigger\./, '').replace(/^\$\./, '');
  return /^[\w.`"-]+$/.test(path) ? path : undefined;
}

/**
 * The fields of a loop's element as `$item…`: from the element the dry run saw (`sample`) when
 * there is one, else from the learned schema (`learned`: the trigger's fields; a loop over
 * `{{ body.lines }}` offers `body.lines[].sku` as `$item.sku`).
 */
export function itemFields(items: unknown, learned: ItemField[], sample: unknown): ItemField[] {
  if (sample !== undefined) {
    return flattenValue(sample, 200).map((r) => ({
      label: r.expression === '$' ? '$item' : `$item.${r.path}`,
      expression: r.expression === '$' ? '$item' : `$item.${r.expression}`,
      type: typeOf(r.value),
      example: r.value,
    }));
  }
  const path = plainPath(items);
  if (!path) return [];
  const out: ItemField[] = [];
  for (const f of learned) {
    if (f.expression === path && f.type === 'array') out.push({ ...f, label: '$item', expression: '$item' });
    else if (f.expression.startsWith(`${path}.`)) {
      const rest = f.expression.slice(path.length + 1);
      out.push({ ...f, label: `$item.${rest}`, expression: `$item.${rest}` });
    }
  }
  return out;
}
