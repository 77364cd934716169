/**
 * Which fields of the trigger item a workflow version's expressions read, and in which steps: what
 * schema drift is measured against (SPEC 7g). A field is read when an expression names it from
 * `$trigger` (`{{ $trigger.body.customer.id }}`, in any step), or from the input of a step whose
 * input is the trigger item (`{{ body.customer.id }}` in the first step, and in the first step of
 * a branch of that step). Paths stop at the first step that is not a plain field name (a filter,
 * a function, a computed step): `body.lines[price > 2].sku` reads `body.lines`. `code` steps are
 * JavaScript, not expressions, and are not read.
 */
import jsonata from 'jsonata';
import { STEP_CATALOG } from '../shared/step-catalog.js';
import { stepLists, withoutLists } from '../shared/step-lists.js';
import { splitTemplate } from '../shared/template-syntax.js';

/** A field of the trigger item (`body.customer.id`) and the steps whose expressions read it. */
export interface FieldRead {
  path: string[];
  steps: string[];
}

interface AstNode {
  type?: string;
  value?: unknown;
  steps?: AstNode[];
  stages?: unknown[];
  predicate?: unknown[];
  [key: string]: unknown;
}

/** Every trigger-item field the steps read, each with the names of the steps reading it. */
export function fieldsRead(steps: readonly unknown[]): FieldRead[] {
  const reads = new Map<string, FieldRead>();
  const add = (path: string[], step: string) => {
    if (path.length === 0) return;
    const key = path.join('\u0000');
    const read = reads.get(key) ?? { path, steps: [] };
    if (!read.steps.includes(step)) read.steps.push(step);
    reads.set(key, read);
  };
  walkList(steps, true, add);
  return [...reads.values()];
}

function walkList(
  steps: readonly unknown[],
  firstSeesTrigger: boolean,
  add: (path: string[], step: string) => void,
): void {
  steps.forEach((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return;
    const step = raw as Record<string, unknown>;
    const type = String(step.type ?? '');
    const name = String(step.name ?? '');
    const inputIsTrigger = firstSeesTrigger && i === 0;
    const lists = STEP_CATALOG[type]?.lists;
    if (type !== 'code') {
      for (const source of expressions(withoutLists(step, lists))) {
        for (const path of readsOf(source, inputIsTrigger)) add(path, name);
      }
    }
    // A branch's first step gets the step's own input; a loop's gets an element.
    const branchesSeeTrigger = inputIsTrigger && type !== 'forEach';
    for (const list of stepLists(step, lists)) walkList(list.steps, branchesSeeTrigger, add);
  });
}

/** The `{{ … }}` sources in every string of a step's own configuration. */
function expressions(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    const split = splitTemplate(value);
    if ('parts' in split) for (const p of split.parts) if (typeof p !== 'string') out.push(p.source);
  } else if (Array.isArray(value)) {
    for (const v of value) expressions(v, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) expressions(v, out);
  }
  return out;
}

/** The trigger-item paths one expression reads (none when it does not parse). */
function readsOf(source: string, inputIsTrigger: boolean): string[][] {
  let ast: AstNode;
  try {
    ast = jsonata(source).ast() as AstNode;
  } catch {
    return [];
  }
  const out: string[][] = [];
  visit(ast, inputIsTrigger, out);
  return out;
}

function visit(node: unknown, contextIsTrigger: boolean, out: string[][]): void {
  if (Array.isArray(node)) {
    for (const n of node) visit(n, contextIsTrigger, out);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const n = node as AstNode;
  if (n.type === 'path' && Array.isArray(n.steps) && n.steps.length > 0) {
    const [first, ...rest] = n.steps;
    if (first?.type === 'variable' && first.value === 'trigger') out.push(leadingNames(rest));
    else if (contextIsTrigger && first?.type === 'name') out.push(leadingNames(n.steps));
    // Inside a path each step is evaluated against the previous one's result: only `$trigger`
    // paths in it still name the trigger item.
    for (const step of n.steps) visitChildren(step, false, out);
    return;
  }
  visitChildren(n, contextIsTrigger, out);
}

function visitChildren(n: AstNode, contextIsTrigger: boolean, out: string[][]): void {
  for (const [key, child] of Object.entries(n)) {
    if (key === 'type' || key === 'value' || key === 'position') continue;
    visit(child, key === 'stages' || key === 'predicate' ? false : contextIsTrigger, out);
  }
}

/** The field names a path starts with, up to (and including) the first one with a filter. */
function leadingNames(steps: AstNode[]): string[] {
  const names: string[] = [];
  for (const step of steps) {
    if (step.type !== 'name' || typeof step.value !== 'string') break;
    names.push(step.value);
    if (step.stages || step.predicate) break;
  }
  return names;
}
