/**
 * The last test run, step by step: what an execution's records say of each step of the draft on
 * screen, by the step's JSON pointer (`/steps/0`, `/steps/1/cases/0/steps/0`). A capture, a replay
 * into the draft and Run now all end in such an execution; the editor shows one of them, the
 * latest, on the cards and in the step's panel.
 *
 * A record belongs to a step by name and type (names are unique in a workflow; the type must match
 * too, or an edited step would borrow another's record). A run of another version than the one
 * being edited is stale: still shown, as what that version did, never as the draft's verdict.
 */
import { catalogLists } from '../../../src/shared/step-catalog';
import { stepLists } from '../../../src/shared/step-lists';
import type { Execution, ExecutionError, ExecutionStep, Step } from '../types';

/** What the last test run did with one step. */
export interface StepRun {
  executionId: string;
  version: number;
  /** `notRun`: the run ended (not succeeded) before it; `pending`: the run goes on and has not reached it. */
  status: ExecutionStep['status'] | 'notRun' | 'pending';
  output?: unknown;
  error?: ExecutionError;
  logs?: string[];
  /** Set when the run is of another version than the one on screen: "from v4, before your edits". */
  stale?: string;
}

const FINISHED = new Set(['succeeded', 'failed', 'filtered', 'skipped']);

export function runFinished(run: Pick<Execution, 'status'>): boolean {
  return FINISHED.has(run.status);
}

/**
 * Why a run's results do not speak for the draft on screen, or undefined when they do: they come
 * from another version, or the draft has edits not saved yet.
 */
export function staleness(runVersion: number, savedVersion: number, dirty: boolean): string | undefined {
  if (runVersion !== savedVersion) return `from v${runVersion}, before your edits`;
  if (dirty) return `from v${runVersion}, before your unsaved edits`;
  return undefined;
}

/** The step failed in a run of the version on screen (a stale failure is not the draft's). */
export function failedNow(run: StepRun | undefined): boolean {
  return run?.status === 'failed' && !run.stale;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The list of a record's step that ran: its branch's for `if`/`switch`, `/steps` for a loop. */
function ranList(record: ExecutionStep): string | undefined {
  if (record.iterations) return '/steps';
  const b = record.branch;
  if (b === undefined) return undefined;
  return typeof b === 'number' ? `/cases/${b}/steps` : `/${b}`;
}

/** The records inside a step's list that ran: a loop's first failed iteration, else its first. */
function innerRecords(record: ExecutionStep): ExecutionStep[] | undefined {
  if (record.iterations) {
    const failed = record.iterations.find((i) => i.status === 'failed');
    return (failed ?? record.iterations[0])?.steps;
  }
  return record.steps;
}

/** Every step of `steps` (nested ones included) with what `run` did with it. */
export function stepRuns(steps: Step[], run: Execution, stale: string | undefined): Record<string, StepRun> {
  const out: Record<string, StepRun> = {};
  const finished = runFinished(run);
  const base = { executionId: run.id, version: run.workflowVersion, ...(stale ? { stale } : {}) };
  const walk = (list: unknown[], at: string, records: ExecutionStep[] | undefined) => {
    for (const [i, raw] of list.entries()) {
      if (!isObject(raw)) continue;
      const step = raw as Step;
      const path = `${at}/${i}`;
      const record = records?.find((r) => r.name === step.name && r.type === step.type);
      if (record) {
        out[path] = {
          ...base,
          status: record.status,
          output: record.output,
          ...(record.error ? { error: record.error } : {}),
          ...(record.logs ? { logs: record.logs } : {}),
        };
      } else if (records) {
        // In a list that ran: the run stopped before this step, or has not reached it yet.
        if (!finished) out[path] = { ...base, status: 'pending' };
        else if (run.status !== 'succeeded') out[path] = { ...base, status: 'notRun' };
      }
      const taken = record ? ranList(record) : undefined;
      for (const nested of stepLists(step, catalogLists(step.type)))
        walk(
          nested.steps,
          `${path}${nested.field}`,
          nested.field === taken ? innerRecords(record!) : undefined,
        );
    }
  };
  walk(steps, '/steps', run.steps ?? []);
  return out;
}
