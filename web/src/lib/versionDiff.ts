/**
 * What differs between two versions of a workflow, as structure rather than text: the steps added,
 * removed and moved (matched by name, at any depth: a step is the same step wherever it sits, as
 * names are unique in a workflow), and for each step, the trigger, the settings and the name the
 * fields whose values changed, old and new. Nested lists are read through the step catalog
 * (src/shared/step-catalog.ts), so a step type that gains a list needs nothing here.
 */
import { catalogLists } from '../../../src/shared/step-catalog';
import { withoutLists } from '../../../src/shared/step-lists';
import type { Step } from '../types';
import { nestedListsOf } from './stepTree';

/** One value that differs: `path` is dotted (`fields.total`, `cases[0].equals`); "" is the value itself. */
export interface FieldChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  /** Absent when added. */
  before?: unknown;
  /** Absent when removed. */
  after?: unknown;
}

/** Where a step sits: its list ("top level", "route › case 1") and its position there (1-based). */
export interface StepPlace {
  list: string;
  position: number;
}

export interface StepChange {
  name: string;
  type: string;
  kind: 'added' | 'removed' | 'kept';
  /** A kept step in another list, or out of order among the steps kept in its list. */
  moved?: { from: StepPlace; to: StepPlace };
  /** Of a kept step: its own fields that changed (the steps it holds are entries of their own). */
  fields: FieldChange[];
  /** Where it is now (where it was, for a removed step). */
  place: StepPlace;
  /** An added or removed step's own fields, to show what it is. */
  config?: Record<string, unknown>;
}

export interface DiffInput {
  name: string;
  trigger: Record<string, unknown>;
  steps: Step[];
  settings?: unknown;
}

export interface VersionDiff {
  name: FieldChange | null;
  trigger: FieldChange[];
  settings: FieldChange[];
  /** Steps that differ: in the newer version's order, removed ones last. */
  steps: StepChange[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/**
 * The leaves where `after` differs from `before`: objects are compared key by key, arrays of the
 * same length element by element; anything else (an array that grew or shrank included) is one change.
 */
export function valueChanges(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (same(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...Object.keys(before), ...Object.keys(after).filter((k) => !Object.hasOwn(before, k))];
    return keys.flatMap((k) => valueChanges(before[k], after[k], join(path, k)));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length)
    return before.flatMap((b, i) => valueChanges(b, after[i], join(path, i)));
  if (before === undefined) return [{ path, kind: 'added', after }];
  if (after === undefined) return [{ path, kind: 'removed', before }];
  return [{ path, kind: 'changed', before, after }];
}

interface Placed {
  step: Step;
  own: Record<string, unknown>;
  /** Key of the list it is in: "" for the top level, else the holder's name and the list's pointer. */
  listKey: string;
  place: StepPlace;
}

/** `cases/0/steps` → "case 1"; `then` → "then". */
function listLabel(suffix: string): string {
  const m = /^(\w+?)s?\/(\d+)\/\w+$/.exec(suffix);
  return m ? `${m[1]} ${Number(m[2]) + 1}` : suffix;
}

function placeAll(steps: Step[]): { byName: Map<string, Placed>; lists: Map<string, string[]> } {
  const byName = new Map<string, Placed>();
  const lists = new Map<string, string[]>();
  const walk = (list: Step[], listKey: string, label: string) => {
    const names: string[] = [];
    list.forEach((step, i) => {
      if (typeof step?.name !== 'string' || byName.has(step.name)) return;
      names.push(step.name);
      byName.set(step.name, {
        step,
        own: withoutLists(step, catalogLists(step.type)),
        listKey,
        place: { list: label, position: i + 1 },
      });
      for (const [suffix, nested] of nestedListsOf(step))
        walk(nested, `${step.name}\u0000${suffix}`, `${step.name} › ${listLabel(suffix)}`);
    });
    lists.set(listKey, names);
  };
  walk(steps, '', 'top level');
  return { byName, lists };
}

/** The longest common subsequence of two lists of distinct names, as a set. */
function commonOrder(a: string[], b: string[]): Set<string> {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      dp[i]![j] = a[i] === b[j] ? dp[i + 1]![j + 1]! + 1 : Math.max(dp[i + 1]![j]!, dp[i]![j + 1]!);
  const out = new Set<string>();
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.add(a[i]!);
      i++;
      j++;
    } else if (dp[i + 1]![j]! >= dp[i]![j + 1]!) i++;
    else j++;
  }
  return out;
}

/**
 * Steps that moved: those now in another list, and in a list they stayed in, those outside the
 * longest run kept in order (one step dragged up is one move, not every step it passed).
 */
function movedNames(before: ReturnType<typeof placeAll>, after: ReturnType<typeof placeAll>): Set<string> {
  const moved = new Set<string>();
  for (const [name, now] of after.byName) {
    const was = before.byName.get(name);
    if (was && was.listKey !== now.listKey) moved.add(name);
  }
  for (const [key, names] of after.lists) {
    const stayed = (list: string[]) =>
      list.filter((n) => before.byName.get(n)?.listKey === key && after.byName.get(n)?.listKey === key);
    const now = stayed(names);
    const was = stayed(before.lists.get(key) ?? []);
    const kept = commonOrder(was, now);
    for (const n of now) if (!kept.has(n)) moved.add(n);
  }
  return moved;
}

export function diffVersions(before: DiffInput, after: DiffInput): VersionDiff {
  const was = placeAll(before.steps);
  const now = placeAll(after.steps);
  const moved = movedNames(was, now);
  const steps: StepChange[] = [];
  for (const [name, p] of now.byName) {
    const old = was.byName.get(name);
    if (!old) {
      steps.push({ name, type: p.step.type, kind: 'added', fields: [], place: p.place, config: p.own });
      continue;
    }
    const fields = valueChanges(old.own, p.own).filter((f) => f.path !== 'name');
    if (fields.length === 0 && !moved.has(name)) continue;
    steps.push({
      name,
      type: p.step.type,
      kind: 'kept',
      fields,
      place: p.place,
      ...(moved.has(name) ? { moved: { from: old.place, to: p.place } } : {}),
    });
  }
  for (const [name, p] of was.byName)
    if (!now.byName.has(name))
      steps.push({ name, type: p.step.type, kind: 'removed', fields: [], place: p.place, config: p.own });
  return {
    name:
      before.name === after.name
        ? null
        : { path: 'name', kind: 'changed', before: before.name, after: after.name },
    trigger: valueChanges(before.trigger, after.trigger),
    settings: valueChanges(before.settings ?? {}, after.settings ?? {}),
    steps,
  };
}

export function isSame(diff: VersionDiff): boolean {
  return !diff.name && diff.trigger.length === 0 && diff.settings.length === 0 && diff.steps.length === 0;
}

/** What differs, in a few words each: "name", "trigger", "settings", "2 steps added", "1 step moved". */
export function diffSummary(diff: VersionDiff): string[] {
  const out: string[] = [];
  if (diff.name) out.push('name');
  if (diff.trigger.length > 0) out.push('trigger');
  if (diff.settings.length > 0) out.push('settings');
  const count = (n: number, what: string) => n > 0 && out.push(`${n} step${n === 1 ? '' : 's'} ${what}`);
  count(diff.steps.filter((s) => s.kind === 'added').length, 'added');
  count(diff.steps.filter((s) => s.kind === 'removed').length, 'removed');
  count(diff.steps.filter((s) => s.moved).length, 'moved');
  count(diff.steps.filter((s) => s.kind === 'kept' && s.fields.length > 0).length, 'changed');
  return out;
}
