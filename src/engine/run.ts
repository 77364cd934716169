/**
 * The step loop: runs a workflow version's steps in order over one trigger item. Knows nothing of
 * HTTP serving or the database: it gets the workflow and the item and returns what happened. A
 * failing step is data on the result (status `failed`, the step named in `error`), never an
 * exception.
 *
 * Per step: render its configuration's `{{ … }}` expressions against `$` (the previous output),
 * `$trigger`, `$steps` and `$execution`; check the rendered values against the step type's
 * schema; run it; record input, output, status, error and timings. A workflow version is compiled
 * once (expressions parsed, validators built) and cached: versions never change once saved.
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { FieldError } from '../errors.js';
import { nowIso } from '../ids.js';
import type { Step, Workflow } from '../workflows/model.js';
import {
  compileTemplate,
  DEFAULT_BUDGET,
  DeadlineReached,
  hasUninterruptible,
  defineEntry,
  type ExpressionBudget,
  ExpressionError,
  renderTemplate,
  type Scope,
  type Template,
} from './expressions.js';
import { createOutbound, type Outbound } from './network.js';
import { STEP_TYPES, stepType } from './steps/index.js';
import { renderedSchema, StepFailure, type StepType } from './steps/types.js';

export interface StepResult {
  name: string;
  type: string;
  /** `waiting`: the step parked the execution (a `wait`), or a step holding it (if/switch/forEach). */
  status: 'succeeded' | 'failed' | 'filtered' | 'waiting';
  input: unknown;
  output: unknown;
  error: ExecutionError | null;
  startedAt: string;
  finishedAt: string;
  /** `if`/`switch`: the branch that ran (`then`/`else`, the case's index, `default`); absent when none did. */
  branch?: 'then' | 'else' | 'default' | number;
  /** `if`/`switch`: the records of the steps that ran inside. */
  steps?: StepResult[];
  /** `forEach`: the first MAX_RECORDED_ITERATIONS iterations, with their steps' records. */
  iterations?: IterationResult[];
  /** `forEach`: how many iterations ran (all of them, recorded or not). */
  iterationCount?: number;
  /** `code`: the first MAX_CODE_LOGS `console.log` lines. */
  logs?: string[];
}

export interface IterationResult {
  index: number;
  status: 'succeeded' | 'filtered' | 'failed' | 'waiting';
  steps: StepResult[];
}

export interface ExecutionError {
  message: string;
  step?: string;
  /** JSON pointer inside the step's configuration, e.g. `/fields/total`. */
  field?: string;
  /** The JSONata text of the expression that failed. */
  expression?: string;
  /** 1-based character position in `expression`. */
  position?: number;
  /** JSONata's error code, or `budget_depth` / `budget_time` / `execution_timeout`. */
  code?: string;
}

export interface RunResult {
  /** `waiting`: a step parked the run (a `wait`); `resumeAt` and `resume` say when and from where. */
  status: 'succeeded' | 'failed' | 'filtered' | 'waiting';
  /** The step records (so far, when waiting: the parked step's record has status `waiting`). */
  steps: StepResult[];
  error: ExecutionError | null;
  /** The last step's output (the trigger item when there are no steps). */
  output: unknown;
  /** Set by the first `respond` step that ran. */
  response?: { status: number; headers: Record<string, string>; body: unknown };
  /** Waiting: when to resume (ISO-8601 UTC). */
  resumeAt?: string;
  /**
   * Waiting: the checkpoint to resume from (`RunContext.resume`). Opaque JSON (survives
   * JSON.stringify/parse); holds the position, the outputs so far and the records so far, never
   * the trigger item (the executor passes that again).
   */
  resume?: unknown;
}

export interface RunContext {
  executionId: string;
  mode: 'test' | 'production' | 'error';
  attempt?: number;
  /** Called once, when the first `respond` step has run (the execution goes on). */
  onRespond?: (response: NonNullable<RunResult['response']>) => void;
  /**
   * Run for at most this long (less than the execution's budget), then give up with OutOfSlice:
   * nothing happened that counts, and the caller has the execution run again elsewhere with its
   * whole budget (a pure workflow tried before its commit: queue/pure-run.ts).
   */
  sliceMs?: number;
  /**
   * Continue a run that ended `waiting`, from its `RunResult.resume` (with the same workflow
   * version and trigger item): the steps before the parked one are not run again (their records
   * are kept and returned), the parked step runs again with its state (a `wait` completes with its
   * input as output), and the run goes on. The execution budget starts afresh.
   */
  resume?: unknown;
}

export interface EngineOptions {
  /** Let `http` steps reach loopback, link-local and private addresses. */
  allowPrivateNetwork: boolean;
  /** Budget of one execution, all steps together. */
  executionTimeoutMs: number;
  /** Budget of one expression evaluation. */
  expressionBudget?: ExpressionBudget;
  /** Outbound HTTP (tests pass their own policy); made from allowPrivateNetwork otherwise. */
  outbound?: Outbound;
}

interface CompiledStep {
  step: Step;
  type: StepType<TSchema>;
  template: Template;
}

interface Validators {
  stored: ReturnType<typeof Compile>;
  rendered: ReturnType<typeof Compile>;
}

// Compiled workflow versions kept; one is a few KB, and a process rarely runs more than a few
// hundred distinct versions between restarts.
const MAX_CACHED_VERSIONS = 500;

export class Engine {
  readonly #options: EngineOptions;
  readonly #budget: ExpressionBudget;
  readonly #outbound: Outbound;
  readonly #compiled = new Map<string, CompiledStep[]>();

  constructor(options: EngineOptions) {
    this.#options = options;
    this.#budget = options.expressionBudget ?? DEFAULT_BUDGET;
    this.#outbound = options.outbound ?? createOutbound({ allowPrivateNetwork: options.allowPrivateNetwork });
  }

  async run(workflow: Workflow, item: unknown, ctx: RunContext): Promise<RunResult> {
    const results: RunResult['steps'] = [];
    let compiled: CompiledStep[];
    try {
      compiled = this.#compile(workflow);
    } catch (err) {
      // Saved workflows were validated; this is a version saved by an older hookflow.
      const error =
        err instanceof StepFailure
          ? { message: err.message, ...(err.field ? { field: err.field } : {}) }
          : { message: String(err) };
      return { status: 'failed', steps: results, error, output: null };
    }

    // The budget of the whole execution. Steps that wait on the outside world (http) are raced
    // against it and cut off by its signal; pure steps are CPU only: the deadline is checked
    // between steps and, inside expressions, as JSONata evaluates (scope.until, expressions.ts).
    // The timer, controller and race promise per execution were ~4 % of the process at 10 000
    // executions/s, for workflows never waiting.
    const timeoutMs = this.#options.executionTimeoutMs;
    const started = Date.now();
    // A slice shorter than the budget ends the run earlier, abandoned rather than failed.
    const sliced = ctx.sliceMs !== undefined && ctx.sliceMs < timeoutMs;
    const until = started + (sliced ? ctx.sliceMs! : timeoutMs);
    const budget = compiled.every(isPure) ? undefined : new AbortController();
    const timer = budget && setTimeout(() => budget.abort(), timeoutMs);
    const outOfTime =
      budget &&
      new Promise<never>((_, reject) => {
        budget.signal.addEventListener('abort', () => reject(new ExecutionTimeout(timeoutMs)), {
          once: true,
        });
      });
    outOfTime?.catch(() => undefined);
    const signal = budget?.signal ?? NEVER_ABORTED;

    const outputs: Record<string, unknown> = {};
    const scope: Scope = {
      input: item,
      trigger: item,
      steps: outputs,
      execution: { id: ctx.executionId, mode: ctx.mode, workflowId: workflow.id, attempt: ctx.attempt ?? 1 },
      until,
    };
    let output: unknown = item;
    let response: RunResult['response'];
    try {
      for (const { step, type, template } of compiled) {
        const startedAt = nowIso();
        const input = output;
        scope.input = input;
        try {
          if (budget?.signal.aborted || Date.now() > until) throw new ExecutionTimeout(timeoutMs);
          const outcome = outOfTime
            ? await Promise.race([this.#runStep(type, template, scope, signal), outOfTime])
            : await this.#runStep(type, template, scope, signal);
          output = outcome.output;
          const status = outcome.filtered ? 'filtered' : 'succeeded';
          results.push({
            name: step.name,
            type: step.type,
            status,
            input,
            output,
            error: null,
            startedAt,
            finishedAt: nowIso(),
          });
          defineEntry(outputs, step.name, output);
          if (outcome.response && response === undefined) {
            response = outcome.response;
            ctx.onRespond?.(response);
          }
          if (outcome.filtered)
            return {
              status: 'filtered',
              steps: results,
              error: null,
              output,
              ...(response ? { response } : {}),
            };
        } catch (err) {
          // Past the budget, whatever the step threw (e.g. its cut-off request) is a consequence: say why.
          const timedOut =
            budget?.signal.aborted || err instanceof DeadlineReached || err instanceof ExecutionTimeout;
          if (timedOut && sliced) throw new OutOfSlice(ctx.sliceMs!);
          const cause = timedOut ? new ExecutionTimeout(timeoutMs) : err;
          const error = { step: step.name, ...describeError(cause) };
          const failedOutput = err instanceof StepFailure && err.output !== undefined ? err.output : null;
          results.push({
            name: step.name,
            type: step.type,
            status: 'failed',
            input,
            output: failedOutput,
            error,
            startedAt,
            finishedAt: nowIso(),
          });
          return { status: 'failed', steps: results, error, output: null, ...(response ? { response } : {}) };
        }
      }
    } finally {
      if (timer) clearTimeout(timer);
    }
    return { status: 'succeeded', steps: results, error: null, output, ...(response ? { response } : {}) };
  }

  async #runStep(type: StepType<TSchema>, template: Template, scope: Scope, signal: AbortSignal) {
    const config = await renderTemplate(template, scope);
    const { rendered } = validators(type);
    if (!rendered.Check(config)) {
      const [first] = schemaErrors(rendered, config);
      throw new StepFailure(
        `After expressions, ${first?.field || 'the step'} ${first?.message ?? 'is not valid'}.`,
        {
          ...(first?.field ? { field: first.field } : {}),
        },
      );
    }
    return type.run(config, { input: scope.input, signal, outbound: this.#outbound });
  }

  /**
   * Whether this workflow version may run before its commit, in a short slice on a thread that
   * serves others (queue/pure-run.ts, webhooks/ingest.ts): only steps declared `pure` (no
   * effect outside the execution, so until the commit nothing happened), and no expression a
   * deadline cannot interrupt (a regular expression, `$eval`: expressions.ts). The others run on
   * the executor's thread, which is stopped when one gets stuck.
   */
  runsBeforeCommit(workflow: Workflow): boolean {
    try {
      return this.#compile(workflow).every((c) => isPure(c) && !hasUninterruptible(c.template));
    } catch {
      return false;
    }
  }

  #compile(workflow: Workflow): CompiledStep[] {
    const key = `${workflow.id}@${workflow.version}`;
    let compiled = this.#compiled.get(key);
    if (compiled) return compiled;
    compiled = workflow.steps.map((step) => {
      const type = stepType(step.type);
      if (!type)
        throw new StepFailure(
          `Step "${step.name}" has type "${step.type}", which this hookflow does not know.`,
        );
      const { template, errors } = compileTemplate(stepConfig(step), '', this.#budget);
      if (errors[0])
        throw new StepFailure(`Step "${step.name}": ${errors[0].message}`, { field: errors[0].field });
      return { step, type, template };
    });
    if (this.#compiled.size >= MAX_CACHED_VERSIONS)
      this.#compiled.delete(this.#compiled.keys().next().value!);
    this.#compiled.set(key, compiled);
    return compiled;
  }

  close(): Promise<void> {
    return this.#outbound.close();
  }
}

const isPure = (c: CompiledStep): boolean => c.type.pure === true;

/** The signal pure steps get: nothing waits on it. */
const NEVER_ABORTED = new AbortController().signal;

/** A run given `sliceMs` did not finish within it (see RunContext.sliceMs). */
export class OutOfSlice extends Error {
  constructor(readonly ms: number) {
    super(`The run did not finish within its slice of ${ms} ms.`);
    this.name = 'OutOfSlice';
  }
}

class ExecutionTimeout extends Error {
  constructor(readonly ms: number) {
    super(
      `The execution ran longer than its budget of ${ms} ms (HOOKFLOW_EXECUTION_TIMEOUT_MS) and was stopped.`,
    );
    this.name = 'ExecutionTimeout';
  }
}

function describeError(err: unknown): Omit<ExecutionError, 'step'> {
  if (err instanceof ExpressionError) {
    const shown = err.expression.length > 120 ? `${err.expression.slice(0, 117)}…` : err.expression;
    return {
      message: `The expression {{${shown}}} in ${err.field} failed: ${err.message}`,
      field: err.field,
      expression: err.expression,
      ...(err.position !== undefined ? { position: err.position } : {}),
      ...(err.code !== undefined ? { code: err.code } : {}),
    };
  }
  if (err instanceof StepFailure) return { message: err.message, ...(err.field ? { field: err.field } : {}) };
  if (err instanceof ExecutionTimeout) return { message: err.message, code: 'execution_timeout' };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** A step's own fields: everything but `name` and `type`. */
function stepConfig(step: Step): Record<string, unknown> {
  const { name: _name, type: _type, ...config } = step;
  return config;
}

const validatorCache = new WeakMap<StepType<TSchema>, Validators>();

function validators(type: StepType<TSchema>): Validators {
  let v = validatorCache.get(type);
  if (!v) {
    v = { stored: Compile(type.config), rendered: Compile(renderedSchema(type.config) as TSchema) };
    validatorCache.set(type, v);
  }
  return v;
}

/** TypeBox errors as FieldErrors: one per field, with the field named (not "must have required properties"). */
function schemaErrors(validator: ReturnType<typeof Compile>, value: unknown): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const add = (field: string, message: string) => {
    if (seen.has(field)) return;
    seen.add(field);
    out.push({ field, message });
  };
  for (const e of validator.Errors(value)) {
    const params = e.params as { additionalProperties?: string[]; requiredProperties?: string[] };
    if (e.keyword === 'additionalProperties') {
      for (const p of params.additionalProperties ?? [])
        add(`${e.instancePath}/${p}`, 'is not a known field');
    } else if (e.keyword === 'required') {
      for (const p of params.requiredProperties ?? []) add(`${e.instancePath}/${p}`, 'is required');
    } else if (e.keyword !== 'boolean' && e.keyword !== 'propertyNames') {
      add(e.instancePath, e.message);
    }
  }
  return out;
}

/**
 * Workflow validation (on save): known step types, unique names, each step's fields against its
 * type's schema, and every `{{ … }}` compiles. Fields are JSON pointers from the workflow root.
 */
export function validateSteps(steps: readonly Step[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  steps.forEach((step, i) => {
    const base = `/steps/${i}`;
    if (seen.has(step.name))
      errors.push({ field: `${base}/name`, message: `duplicate step name "${step.name}"` });
    seen.add(step.name);
    const type = stepType(step.type);
    if (!type) {
      errors.push({
        field: `${base}/type`,
        message: `unknown step type "${step.type}" (known: ${[...STEP_TYPES.keys()].join(', ')})`,
      });
      return;
    }
    const config = stepConfig(step);
    const { stored } = validators(type);
    if (!stored.Check(config)) {
      for (const e of schemaErrors(stored, config))
        errors.push({ field: `${base}${e.field}`, message: e.message });
      return;
    }
    for (const e of type.check?.(config) ?? [])
      errors.push({ field: `${base}${e.field}`, message: e.message });
    for (const e of compileTemplate(config).errors) {
      errors.push({ field: `${base}${e.field}`, message: `expression does not compile: ${e.message}` });
    }
  });
  return errors;
}
