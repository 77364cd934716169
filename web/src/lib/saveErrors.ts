/**
 * Which part of a failed save is still true. A failed save is a snapshot: the body
 * that was sent and the problems found in it. Once the user edits a field, its problem is about a
 * value that is no longer there, so it goes; "Not saved" goes with the last of them, and at once
 * when the draft is back to the saved version (nothing is unsaved then).
 */
import type { FieldProblem } from '../api';

export type SaveFailure = {
  status: number;
  /** Code, message and hint of the failure; its own fields are in `fields`. */
  code: string;
  message: string;
  hint?: string;
  /** The server's field problems (pointers into `body`). */
  fields: FieldProblem[];
  /** `path_conflict`: the other workflow, to name and link. */
  conflictingWorkflow?: { id: string; name: string } | undefined;
  /** Found by the form before sending: its problems are recomputed live from the draft instead. */
  local: boolean;
  /** The body the failure is about. */
  body: unknown;
};

/** The value at a JSON pointer (`/steps/0/name`), or undefined where the path does not lead. */
export function valueAt(value: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return value;
  let at: unknown = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The problems whose field still holds the value they were found in. */
export function unchangedProblems(fields: FieldProblem[], then: unknown, now: unknown): FieldProblem[] {
  return fields.filter((p) => same(valueAt(then, p.field), valueAt(now, p.field)));
}

/**
 * What of a failed save to show now: the live problems for a failure the form found, the server's
 * problems on fields not edited since, a failure without fields until the draft changes; nothing
 * once every listed field is fixed or nothing is unsaved.
 */
export function currentFailure(
  failure: SaveFailure | null,
  now: unknown,
  liveProblems: FieldProblem[],
  dirty: boolean,
): Omit<SaveFailure, 'local' | 'body'> | null {
  if (!failure || !dirty) return null;
  if (failure.local) return liveProblems.length > 0 ? { ...failure, fields: liveProblems } : null;
  if (failure.fields.length > 0) {
    const fields = unchangedProblems(failure.fields, failure.body, now);
    return fields.length > 0 ? { ...failure, fields } : null;
  }
  return same(failure.body, now) ? failure : null;
}

/** Readable names for the fields a validation error points at (`/trigger/path` → "Path"). */
const FIELD_NAMES: [RegExp, string][] = [
  [/^\/name$/, 'Name'],
  [/^\/trigger\/path$/, 'Path'],
  [/^\/trigger\/methods/, 'Methods'],
  [/^\/trigger\/auth/, 'Authentication'],
  [/^\/trigger\/response/, 'Response'],
  [/^\/trigger\/options/, 'Options'],
  [/^\/email$/, 'Email'],
  [/^\/password$/, 'Password'],
  [/^\/setupCode$/, 'Setup code'],
];

/** A list inside a pointer, named by what one of its elements is (`cases/0` → "case 1"). */
const ELEMENTS: Record<string, string> = {
  steps: 'step',
  then: 'then step',
  else: 'else step',
  default: 'default step',
  cases: 'case',
  fields: 'field',
  searchFields: 'search field',
};

/**
 * A field's pointer as people count: every position from 1 (`/steps/1/cases/0/steps/2/url` →
 * "Step 2 › case 1 › step 3 › url"), with the step's name where `body` (what was saved) has one:
 * "Step 2 (route) › case 1 › step 3 (notify) › url". The cards number steps the same way.
 */
export function fieldLabel(field: string, body?: unknown): string {
  const named = FIELD_NAMES.find(([pattern]) => pattern.test(field));
  const consumed = named ? named[0].exec(field)![0] : '';
  const parts = named ? [named[1]] : [];
  const segments = field.slice(consumed.length).split('/').slice(1);
  let at = consumed;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = segments[i + 1];
    if (next !== undefined && /^\d+$/.test(next) && Object.hasOwn(ELEMENTS, seg)) {
      at += `/${seg}/${next}`;
      i++;
      const name = ELEMENTS[seg]!.endsWith('step') ? valueAt(body, `${at}/name`) : undefined;
      parts.push(
        `${ELEMENTS[seg]} ${Number(next) + 1}${typeof name === 'string' && name ? ` (${name})` : ''}`,
      );
      continue;
    }
    at += `/${seg}`;
    parts.push(/^\d+$/.test(seg) ? `#${Number(seg) + 1}` : seg.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  const label = parts.join(' › ');
  return label ? label[0]!.toUpperCase() + label.slice(1) : field;
}
