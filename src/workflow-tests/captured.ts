/**
 * What a test keeps of a captured execution (SPEC 7g): the recorded outputs of its effectful steps
 * (the mocks a test run answers with instead of calling out), and every step's status and output
 * (what the run is expected to give). A step run is named by its step's name (unique in the
 * workflow) and, inside `forEach` loops, the iteration indices, outermost first: `notify.2` — the
 * same key the `http` step's Idempotency-Key uses.
 */
import type { StepResult } from '../engine/run.js';
import type { ExecutionError } from '../model/execution.js';

/** A step run as recorded: enough to answer for it (a mock) or to compare with (an expectation). */
export interface RecordedStep {
  status: string;
  output: unknown;
  error?: ExecutionError | null;
}

/** Effectful step runs by key: what a test run answers with. */
export type Mocks = Record<string, RecordedStep>;

export interface Expectation {
  /** The execution's status (`succeeded`, `failed`, `filtered`). */
  status: string;
  /** The run's output: the last step's (what `lastStep` answers). */
  output: unknown;
  /** Every step run by key, effectful or not. */
  steps: Record<string, RecordedStep>;
}

/** The key of one run of a step: its name, then its forEach indices. */
export function stepKey(name: string, indices: readonly number[] = []): string {
  return [name, ...indices].join('.');
}

/** Every step run in `records` (nested branches and loop iterations included), by key. */
export function keyedRecords(records: readonly StepResult[]): Map<string, StepResult> {
  const out = new Map<string, StepResult>();
  const walk = (list: readonly StepResult[], indices: number[]) => {
    for (const r of list) {
      out.set(stepKey(r.name, indices), r);
      if (r.steps) walk(r.steps, indices);
      for (const it of r.iterations ?? []) walk(it.steps, [...indices, it.index]);
    }
  };
  walk(records, []);
  return out;
}

export function recorded(r: StepResult): RecordedStep {
  return { status: r.status, output: r.output ?? null, ...(r.error ? { error: r.error } : {}) };
}

/** The mocks and the expectation a captured execution's records give. */
export function capture(
  records: readonly StepResult[],
  run: { status: string; output: unknown },
  isEffectful: (type: string) => boolean,
): { mocks: Mocks; expected: Expectation } {
  const mocks: Mocks = {};
  const steps: Record<string, RecordedStep> = {};
  for (const [key, r] of keyedRecords(records)) {
    steps[key] = recorded(r);
    if (isEffectful(r.type)) mocks[key] = recorded(r);
  }
  return { mocks, expected: { status: run.status, output: run.output ?? null, steps } };
}
