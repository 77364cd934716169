/**
 * Which part of a failed save is still true (issue 17 #5). A failed save is a snapshot: the body
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
