/**
 * A run's state from its start to its result: the execution's budget (and the slice), the
 * checkpoint it resumes from, and what it comes to (RunResult; a park writes its checkpoint).
 */
import type { Workflow } from '../model/workflow.js';
import {
  type Checkpoint,
  CheckpointLog,
  CheckpointTooLarge,
  type CheckpointWrite,
  checkpointError,
} from './checkpoint.js';
import type { Compiled } from './compile.js';
import { scrubber } from './credentials.js';
import { ExecutionTimeout } from './errors.js';
import type { Scope } from './expressions.js';
import { type ResumeUrlOptions, resumeUrl } from './resume-url.js';
import type { CheckpointLimits, End, Run, RunContext, RunResult, StepResult } from './types.js';

/** The signal pure steps get: nothing waits on it. */
const NEVER_ABORTED = new AbortController().signal;

/** A run started: its state, its steps, its records so far, and the timer of its budget (none when pure). */
export interface Started {
  run: Run;
  compiled: Compiled;
  records: StepResult[];
  timer: NodeJS.Timeout | undefined;
}

/** A run's state, or its result when it cannot start (a checkpoint it cannot read). */
export function startRun(
  workflow: Workflow,
  compiled: Compiled,
  item: unknown,
  ctx: RunContext,
  timeoutMs: number,
  limits: CheckpointLimits,
  resumeUrls?: ResumeUrlOptions,
): Started | RunResult {
  let checkpoint: Checkpoint | undefined;
  let log: CheckpointLog | undefined;
  if (ctx.resume !== undefined) {
    const loaded = CheckpointLog.load(ctx.resume, limits);
    if (!loaded)
      return {
        status: 'failed',
        steps: [],
        error: { message: 'The checkpoint of this waiting execution cannot be read; it cannot resume.' },
        output: null,
      };
    ({ checkpoint, log } = loaded);
  }

  // The budget of the whole execution, what the runs before this resume used counted (time
  // parked is not: waiting is not running). Steps that wait on the outside world (http) are
  // raced against it and cut off by its signal; pure steps are CPU only: the deadline is checked
  // between steps and, inside expressions, as JSONata evaluates (scope.until, expressions.ts).
  // A pure workflow gets no timer, controller or race promise: those were ~4 % of the process
  // at 10 000 executions/s.
  const usedBefore = checkpoint?.elapsedMs ?? 0;
  const left = Math.max(0, timeoutMs - usedBefore);
  const started = Date.now();
  // A slice shorter than the budget ends the run earlier, abandoned rather than failed.
  const sliced = ctx.sliceMs !== undefined && ctx.sliceMs < left;
  const until = started + (sliced ? ctx.sliceMs! : left);
  const budget = compiled.pure ? undefined : new AbortController();
  const timer = budget && setTimeout(() => budget.abort(), left);
  const outOfTime =
    budget &&
    new Promise<never>((_, reject) => {
      budget.signal.addEventListener('abort', () => reject(new ExecutionTimeout(timeoutMs)), {
        once: true,
      });
    });
  outOfTime?.catch(() => undefined);

  const outputs: Record<string, unknown> = checkpoint ? checkpoint.steps : {};
  const secretValues = Object.values(ctx.variables?.secrets ?? {});
  const run: Run = {
    item,
    ctx,
    scope: {
      input: item,
      trigger: item,
      steps: outputs,
      execution: executionScope(ctx, workflow.id, compiled.resumeUrl ? resumeUrls : undefined),
      until,
      vars: ctx.variables?.vars,
      secrets: ctx.variables?.secrets,
    },
    outputs,
    budget,
    outOfTime,
    signal: budget?.signal ?? NEVER_ABORTED,
    until,
    timeoutMs,
    sliced,
    response: checkpoint?.response,
    resumeAt: checkpoint?.at,
    parkState: checkpoint?.state,
    started,
    usedBefore,
    log,
    limits: limits,
    indices: [],
    secrets: secretValues,
    scrub: secretValues.length > 0 ? scrubber(secretValues) : undefined,
  };
  const records = checkpoint ? (checkpoint.records as unknown as StepResult[]) : [];
  return { run, compiled, records, timer };
}

/** The run's result from how its top-level list ended. */
export function runResult(end: End, run: Run, records: StepResult[]): RunResult {
  const response = run.response ? { response: run.response } : {};
  switch (end.end) {
    case 'done':
      return { status: 'succeeded', steps: records, error: null, output: end.output, ...response };
    case 'filtered':
      return { status: 'filtered', steps: records, error: null, output: end.output, ...response };
    case 'failed':
      return { status: 'failed', steps: records, error: end.error, output: null, ...response };
    case 'parked': {
      run.log ??= new CheckpointLog(run.limits);
      let checkpoint: CheckpointWrite;
      try {
        checkpoint = run.log.write({
          at: end.at,
          state: run.parkState,
          steps: run.outputs,
          records: records as unknown as Checkpoint['records'],
          response: run.response,
          elapsedMs: run.usedBefore + (Date.now() - run.started),
        });
      } catch (err) {
        if (!(err instanceof CheckpointTooLarge)) throw err;
        const error = checkpointError(err, failParked(records));
        return { status: 'failed', steps: records, error, output: null, ...response };
      }
      return {
        status: 'waiting',
        steps: records,
        error: null,
        output: null,
        resumeAt: end.until.toISOString(),
        checkpoint,
        ...response,
      };
    }
  }
}

/**
 * A run that could not park fails where it stood: the records going on (`waiting`) become
 * `failed`, the parked step's with the error. Returns the parked step's name.
 */
function failParked(records: StepResult[]): string {
  const last = records[records.length - 1];
  if (last?.status !== 'waiting') return '';
  last.status = 'failed';
  const iteration = last.iterations?.[last.iterations.length - 1];
  if (iteration?.status === 'waiting') {
    iteration.status = 'failed';
    return failParked(iteration.steps);
  }
  if (last.steps) {
    const inner = failParked(last.steps);
    if (inner) return inner;
  }
  return last.name;
}

/**
 * `$execution`. Its `resumeUrl` is computed on first read (an HMAC: engine/resume-url.ts), and only
 * for a version that names it (`resumeUrls` is undefined otherwise: compile.ts `resumeUrl`); as an
 * enumerable getter it is there for JSON and for the `code` step's copy.
 */
function executionScope(
  ctx: RunContext,
  workflowId: string,
  resumeUrls: ResumeUrlOptions | undefined,
): Scope['execution'] {
  const execution = { id: ctx.executionId, mode: ctx.mode, workflowId, attempt: ctx.attempt ?? 1 };
  if (!resumeUrls) return execution;
  let url: string | undefined;
  return {
    ...execution,
    get resumeUrl() {
      url ??= resumeUrl(resumeUrls, ctx.executionId);
      return url;
    },
  };
}
