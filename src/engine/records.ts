/**
 * Walking execution records (engine/run.ts StepResult), nested ones included: a step holding
 * steps keeps theirs in `steps` (if/switch) or `iterations[].steps` (forEach). Pre-order is the
 * order the steps ran in.
 */

/** The shape walked: what a stored record has at least (a parsed `executions.steps` element). */
export interface RecordLike {
  type: string;
  status: string;
  output?: unknown;
  steps?: RecordLike[];
  iterations?: { steps: RecordLike[] }[];
}

/** Every record, in the order the steps ran (a step holding steps before the steps it holds). */
export function* walkRecords<R extends RecordLike>(records: readonly R[]): Generator<R> {
  for (const record of records) {
    yield record;
    if (Array.isArray(record.steps)) yield* walkRecords(record.steps as R[]);
    if (Array.isArray(record.iterations))
      for (const iteration of record.iterations)
        if (Array.isArray(iteration?.steps)) yield* walkRecords(iteration.steps as R[]);
  }
}

/** The first record (in run order) that `match` accepts. */
export function findRecord<R extends RecordLike>(
  records: readonly R[],
  match: (r: R) => boolean,
): R | undefined {
  for (const r of walkRecords(records)) if (match(r)) return r;
  return undefined;
}
