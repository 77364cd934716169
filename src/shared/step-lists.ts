/**
 * Where a step keeps its nested step lists, as data: a step type declares them (StepType.lists in
 * src/engine/steps/, copied to step-catalog.ts for the model and the UI) as paths inside the step,
 * `then`, or for the `steps` of each element of the array `cases`: `cases`, `*`, `steps` joined
 * by slashes (`*`: each element). This module
 * reads a stored step by such a declaration; the validator, the compiler, the walk over a
 * workflow's steps and the editor's preview all go through it. Browser-safe: no imports.
 */

/** A nested step list of a stored step. */
export interface NestedList {
  /** JSON pointer of the list inside the step (`/then`, `/cases/1/steps`). */
  field: string;
  steps: unknown[];
}

/** The nested step lists a stored step holds, in the order `paths` declares them (absent ones left out). */
export function stepLists(step: object, paths: readonly string[] | undefined): NestedList[] {
  const out: NestedList[] = [];
  if (paths) for (const path of paths) collect(step, path.split('/'), 0, '', out);
  return out;
}

function collect(value: unknown, segments: string[], at: number, pointer: string, out: NestedList[]): void {
  if (at === segments.length) {
    if (Array.isArray(value)) out.push({ field: pointer, steps: value });
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const key = segments[at]!;
  if (key === '*') {
    if (Array.isArray(value))
      for (let i = 0; i < value.length; i++) collect(value[i], segments, at + 1, `${pointer}/${i}`, out);
    return;
  }
  if (Array.isArray(value) || !Object.hasOwn(value, key)) return;
  collect((value as Record<string, unknown>)[key], segments, at + 1, `${pointer}/${key}`, out);
}

/** The step without its nested lists: its own fields (a copy; the lists' containers are copied too). */
export function withoutLists(
  step: Record<string, unknown>,
  paths: readonly string[] | undefined,
): Record<string, unknown> {
  const out = { ...step };
  if (paths) for (const path of paths) remove(out, path.split('/'), 0);
  return out;
}

function remove(value: Record<string, unknown> | unknown[], segments: string[], at: number): void {
  const key = segments[at]!;
  const last = at === segments.length - 1;
  if (key === '*') {
    if (!Array.isArray(value)) return;
    for (let i = 0; i < value.length; i++) {
      const element = value[i];
      if (typeof element !== 'object' || element === null) continue;
      const copy = Array.isArray(element) ? [...element] : { ...(element as Record<string, unknown>) };
      value[i] = copy;
      remove(copy, segments, at + 1);
    }
    return;
  }
  if (Array.isArray(value) || !Object.hasOwn(value, key)) return;
  if (last) {
    delete value[key];
    return;
  }
  const child = value[key];
  if (typeof child !== 'object' || child === null) return;
  const copy = Array.isArray(child) ? [...child] : { ...(child as Record<string, unknown>) };
  value[key] = copy;
  remove(copy, segments, at + 1);
}

/**
 * How a step record names the list that ran (StepResult.branch): its field (`then`), or, for a list
 * in each element of an array, the element's index (`/cases/2/steps` → 2).
 */
export function branchOf(field: string): string | number {
  const segments = field.slice(1).split('/');
  const index = segments.find((s) => /^\d+$/.test(s));
  return index === undefined ? segments.join('/') : Number(index);
}

/** A step with its JSON pointer from the workflow root (`/steps/1/cases/0/steps/2`). */
export interface PlacedStep<S = Record<string, unknown>> {
  step: S;
  pointer: string;
}

/**
 * Every step of a list, nested ones included, a step before the steps it holds; `listsOf` gives a
 * step type's declared lists (undefined: it holds none). Entries that are not objects are skipped.
 */
export function* walkStepLists<S = Record<string, unknown>>(
  steps: readonly unknown[],
  listsOf: (type: unknown) => readonly string[] | undefined,
  base = '/steps',
): Generator<PlacedStep<S>> {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step === null || typeof step !== 'object' || Array.isArray(step)) continue;
    const pointer = `${base}/${i}`;
    yield { step: step as S, pointer };
    for (const list of stepLists(step, listsOf((step as { type?: unknown }).type)))
      yield* walkStepLists<S>(list.steps, listsOf, `${pointer}${list.field}`);
  }
}

/** What src/shared/step-catalog.ts says of a step type (copied from src/engine/steps/). */
export interface StepCatalogEntry {
  /** Where it keeps nested step lists (StepType.lists); empty when it holds none. */
  lists: readonly string[];
  /** No effect outside the execution (StepType.pure). */
  pure: boolean;
  description: string;
  /** The fields (JSON pointers in the step) where `$secrets` may be used (StepType.secretFields). */
  secretFields: readonly string[];
}
