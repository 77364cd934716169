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
import { isoAt, nowIso } from '../ids.js';
import type { ExecutionError } from '../model/execution.js';
import type { Step, Workflow } from '../model/workflow.js';
import {
  compileTemplate,
  DEFAULT_BUDGET,
  DeadlineReached,
  hasUninterruptible,
  defineEntry,
  type ExpressionBudget,
  ExpressionError,
  renderNow,
  renderTemplate,
  type Scope,
  type Template,
} from './expressions.js';
import type { RunCredentials } from './credentials.js';
import {
  type Checkpoint,
  CheckpointLog,
  CheckpointTooLarge,
  type CheckpointWrite,
  checkpointError,
  type Frame,
} from './checkpoint.js';
import { DEFAULT_RECORD_MAX_BYTES, JsonSizer } from '../model/record-json.js';
import { createOutbound, type Outbound } from './network.js';
import { jsonEqual } from '../shared/json-equal.js';
import { stepType } from './steps/index.js';
import { renderedCheckNeeded, schemaErrors, stepConfig, type Validators, validators } from './validate.js';
import { StepFailure, type StepContext, type StepOutcome, type StepType } from './steps/types.js';

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
  /** `http`: the request as sent, a credential's value as "***" (SPEC 7c). */
  request?: unknown;
  /** `http`: each attempt, `{at, status}` or `{at, error}` (SPEC 7c retry). */
  attempts?: unknown[];
}

export interface IterationResult {
  index: number;
  status: 'succeeded' | 'filtered' | 'failed' | 'waiting';
  steps: StepResult[];
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
   * Waiting: what this park adds to the execution's checkpoint (engine/checkpoint.ts): the new head
   * and one more part. Never the trigger item (the executor passes that again).
   */
  checkpoint?: CheckpointWrite;
  /**
   * `steps` as stored, when serialised already: the engine thread posts the records as their JSON
   * within HOOKFLOW_EXECUTION_RECORD_MAX_BYTES (model/record-json.ts `recordJson`), `steps` left
   * empty, so the event loop neither copies nor serialises them.
   */
  record?: string;
}

export interface RunContext {
  executionId: string;
  mode: 'test' | 'production' | 'error';
  attempt?: number;
  /** Called once, when the first `respond` step has run (the execution goes on). */
  onRespond?: (response: NonNullable<RunResult['response']>) => void;
  /** The credentials the version's `http` steps name, unsealed for this run (engine/credentials.ts). */
  credentials?: RunCredentials;
  /**
   * Run for at most this long (less than the execution's budget), then give up with OutOfSlice:
   * nothing happened that counts, and the caller has the execution run again elsewhere with its
   * whole budget (a pure workflow tried before its commit: queue/pure-run.ts).
   */
  sliceMs?: number;
  /**
   * Continue a run that ended `waiting`, from its checkpoint as stored (`checkpointJson` of the
   * head and every part so far; with the same workflow version and trigger item): the steps before
   * the parked one are not run again (their records are kept and returned), the parked step runs
   * again with its state (a `wait` completes with its input as output), and the run goes on. The
   * execution budget goes on from what the runs before used (time parked does not count).
   */
  resume?: string;
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
  /** HOOKFLOW_FOREACH_MAX_ITEMS: most elements one `forEach` runs over (default 10 000). */
  foreachMaxItems?: number;
  /** HOOKFLOW_CODE_MEMORY_MB: memory of one `code` run (default 64). */
  codeMemoryMb?: number;
  /** HOOKFLOW_CODE_TIMEOUT_MS: time of one `code` run (default 1 000). */
  codeTimeoutMs?: number;
  /** HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: connections `http` steps open to one origin (default 128). */
  httpMaxSocketsPerHost?: number;
  /**
   * HOOKFLOW_EXECUTION_RECORD_MAX_BYTES: most bytes of an execution's record (default 4 MiB);
   * what a waiting execution's checkpoint may hold in all is 8 times that.
   */
  recordMaxBytes?: number;
}

/** A step as compiled: a step type's (`leaf`) or one holding steps, with its expressions compiled. */
type Node = LeafNode | IfNode | SwitchNode | ForEachNode;

interface LeafNode {
  kind: 'leaf';
  step: Step;
  type: StepType<TSchema>;
  template: Template;
  /** The type's `literal` fields, as written (put back after rendering). */
  literal: [string, unknown][] | undefined;
  /** The check of the rendered configuration, when it needs one (renderedCheckNeeded). */
  check: Validators['rendered'] | undefined;
}

interface IfNode {
  kind: 'if';
  step: Step;
  condition: Template;
  thenSteps: Node[];
  elseSteps: Node[] | undefined;
}

interface SwitchNode {
  kind: 'switch';
  step: Step;
  value: Template;
  cases: { equals?: { value: unknown }; when?: Template; steps: Node[] }[];
  default: Node[] | undefined;
}

interface ForEachNode {
  kind: 'forEach';
  step: Step;
  items: Template;
  steps: Node[];
}

interface Compiled {
  nodes: Node[];
  /** Every step pure (CPU only, no effect outside the execution), nested ones included. */
  pure: boolean;
  /** Some expression may spend unbounded time in one call (expressions.ts `uninterruptible`). */
  uninterruptible: boolean;
  /** Every step pure or contained (StepType.contained): no effect outside the execution. */
  contained: boolean;
}

type Branch = NonNullable<StepResult['branch']>;

/** How a step list ended. */
type End =
  | { end: 'done'; output: unknown }
  /** A `filter` said no: the run ends `filtered`, or inside a `forEach` the iteration does. */
  | { end: 'filtered'; output: unknown }
  | { end: 'failed'; error: ExecutionError }
  /** A step parked: `at` is filled in as the lists return, innermost first. */
  | { end: 'parked'; until: Date; at: Frame[] };

/** One run's state, shared by the nested step lists. */
interface Run {
  item: unknown;
  ctx: RunContext;
  scope: Scope;
  outputs: Record<string, unknown>;
  budget: AbortController | undefined;
  outOfTime: Promise<never> | undefined;
  signal: AbortSignal;
  until: number;
  timeoutMs: number;
  sliced: boolean;
  response: RunResult['response'];
  /** While resuming: the checkpoint's frames, until the parked step is reached. */
  resumeAt: Frame[] | undefined;
  /** The parked step's state (to resume it), or the state a step just parked with. */
  parkState: unknown;
  /** When this run started (epoch ms), and the compute time the execution used before it (ms). */
  started: number;
  usedBefore: number;
  /** What the stored checkpoint holds (resumed), so a park writes only what is new. */
  log: CheckpointLog | undefined;
  limits: CheckpointLimits;
  /** The iteration of each enclosing `forEach`, outermost first (StepContext.indices). */
  indices: number[];
}

/** The bounds of an execution's checkpoint (CheckpointLog). */
interface CheckpointLimits {
  recordMaxBytes: number;
  stateMaxBytes: number;
}

/** Where a step holding steps runs: its record, its input, the run, its list's depth, and (resuming) its frame. */
interface FlowAt {
  record: StepResult;
  input: unknown;
  run: Run;
  depth: number;
  frame: Frame | undefined;
}

/** Iterations of a `forEach` recorded in full; `iterationCount` counts them all. */
export const MAX_RECORDED_ITERATIONS = 100;

/** A waiting execution's checkpoint may hold this many times HOOKFLOW_EXECUTION_RECORD_MAX_BYTES in all. */
export const CHECKPOINT_FACTOR = 8;
const DEFAULT_FOREACH_MAX_ITEMS = 10_000;

// Compiled workflow versions kept; one is a few KB, and a process rarely runs more than a few
// hundred distinct versions between restarts.
const MAX_CACHED_VERSIONS = 500;

export class Engine {
  readonly #options: EngineOptions;
  readonly #budget: ExpressionBudget;
  readonly #outbound: Outbound;
  readonly #compiled = new Map<string, Compiled>();
  /** The same, by Workflow object (versions never change once saved). */
  readonly #compiledObjects = new WeakMap<Workflow, Compiled>();
  readonly #limits: { memoryBytes: number; timeoutMs: number };
  readonly #maxItems: number;
  readonly #checkpointLimits: CheckpointLimits;

  constructor(options: EngineOptions) {
    this.#options = options;
    this.#budget = options.expressionBudget ?? DEFAULT_BUDGET;
    this.#outbound =
      options.outbound ??
      createOutbound({
        allowPrivateNetwork: options.allowPrivateNetwork,
        maxSocketsPerHost: options.httpMaxSocketsPerHost,
      });
    this.#limits = {
      memoryBytes: (options.codeMemoryMb ?? 64) * 1024 * 1024,
      timeoutMs: options.codeTimeoutMs ?? 1_000,
    };
    this.#maxItems = options.foreachMaxItems ?? DEFAULT_FOREACH_MAX_ITEMS;
    const recordMaxBytes = options.recordMaxBytes ?? DEFAULT_RECORD_MAX_BYTES;
    this.#checkpointLimits = { recordMaxBytes, stateMaxBytes: CHECKPOINT_FACTOR * recordMaxBytes };
  }

  /** HOOKFLOW_EXECUTION_RECORD_MAX_BYTES: what an execution's record may hold (model/record-json.ts). */
  get recordMaxBytes(): number {
    return this.#checkpointLimits.recordMaxBytes;
  }

  async run(workflow: Workflow, item: unknown, ctx: RunContext): Promise<RunResult> {
    return this.runNow(workflow, item, ctx);
  }

  /**
   * `run` without a promise when every step answers at once (StepType.run returns a value, as the
   * pure steps do): the result itself, or a Promise of it once a step needs one. On that path
   * OutOfSlice is thrown, not rejected. (queue/pure-run.ts runs set → filter → set this way before
   * a commit: no async function, no promise, no microtask turn for the run.)
   */
  runNow(workflow: Workflow, item: unknown, ctx: RunContext): RunResult | Promise<RunResult> {
    let compiled: Compiled;
    try {
      compiled = this.#compile(workflow);
    } catch (err) {
      // Saved workflows were validated; this is a version saved by an older hookflow.
      const error =
        err instanceof StepFailure
          ? { message: err.message, ...(err.field ? { field: err.field } : {}) }
          : { message: String(err) };
      return { status: 'failed', steps: [], error, output: null };
    }

    let checkpoint: Checkpoint | undefined;
    let log: CheckpointLog | undefined;
    if (ctx.resume !== undefined) {
      const loaded = CheckpointLog.load(ctx.resume, this.#checkpointLimits);
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
    // The timer, controller and race promise per execution were ~4 % of the process at 10 000
    // executions/s, for workflows never waiting.
    const timeoutMs = this.#options.executionTimeoutMs;
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
    const run: Run = {
      item,
      ctx,
      scope: {
        input: item,
        trigger: item,
        steps: outputs,
        execution: {
          id: ctx.executionId,
          mode: ctx.mode,
          workflowId: workflow.id,
          attempt: ctx.attempt ?? 1,
        },
        until,
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
      limits: this.#checkpointLimits,
      indices: [],
    };
    const records = checkpoint ? (checkpoint.records as unknown as StepResult[]) : [];
    let end: End | Promise<End>;
    try {
      end = this.#runList(compiled.nodes, records, item, run, 0);
    } catch (err) {
      if (timer) clearTimeout(timer);
      throw err;
    }
    if (end instanceof Promise) return resultLater(end, run, records, outputs, timer);
    if (timer) clearTimeout(timer);
    return runResult(end, run, records, outputs);
  }

  /**
   * Runs a step list from its start (or, resuming, from the checkpoint's step), each step on the
   * previous one's output, recording into `records`. `depth`: 0 for the top level. The end itself
   * while every step answers at once; from the first step that answers with a promise (or holds
   * steps) on, a Promise of it: the rest of the list runs after it (`from`: that step's index + 1,
   * `clock`: when it finished).
   */
  #runList(
    nodes: Node[],
    records: StepResult[],
    input: unknown,
    run: Run,
    depth: number,
    from = 0,
    clock?: number,
  ): End | Promise<End> {
    let output = input;
    let i = from;
    // `clock`: the clock as the previous step of this list finished (undefined after a step holding
    // steps): the next step starts then. One reading per step instead of three (its start, the
    // deadline check and its end), as the flow floor reads it (bench/floor-server.js benchFlow).
    const frame = from === 0 ? run.resumeAt?.[depth] : undefined;
    if (frame) {
      i = frame.i;
      output = frame.t === 1 ? run.item : frame.input;
    }
    for (; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.kind !== 'leaf') return this.#flowThenRest(node, nodes, records, output, run, depth, i);
      // A step of a step type: render, check, run, record. Inline, not a method of its own: this is
      // the hot loop of every flat workflow, which should pay no promise or object per step for
      // nesting (measured on set → filter → set).
      const { step } = node;
      const input = output;
      let startedAt: string | undefined;
      let resume: { state: unknown } | undefined;
      if (run.resumeAt) {
        // This is the parked step: it runs again with its state, keeping its first start.
        resume = { state: run.parkState };
        run.resumeAt = undefined;
        const last = records[records.length - 1];
        if (last?.name === step.name && last.status === 'waiting') {
          records.pop();
          startedAt = last.startedAt;
        }
      }
      const now = clock ?? Date.now();
      startedAt ??= isoAt(now);
      const scope = run.scope;
      scope.input = input;
      let outcome: StepOutcome | Promise<StepOutcome>;
      try {
        if (run.budget?.signal.aborted || now > run.until) throw new ExecutionTimeout(run.timeoutMs);
        // A promise only when the step needs one (see StepType.run): set → filter → set takes none.
        outcome = this.#runStep(node, scope, run, resume);
      } catch (err) {
        return this.#failed(err, step, run, records, input, startedAt);
      }
      if (outcome instanceof Promise)
        return this.#stepThenRest(outcome, node, nodes, records, input, run, depth, i, startedAt);
      clock = Date.now();
      const end = this.#record(outcome, step, records, input, run, i, startedAt, clock);
      if (end) return end;
      output = outcome.output;
    }
    return { end: 'done', output };
  }

  /** A step that answered with a promise, then the rest of its list. */
  async #stepThenRest(
    pending: Promise<StepOutcome>,
    node: LeafNode,
    nodes: Node[],
    records: StepResult[],
    input: unknown,
    run: Run,
    depth: number,
    i: number,
    startedAt: string,
  ): Promise<End> {
    let outcome: StepOutcome;
    try {
      outcome = await (run.outOfTime ? Promise.race([pending, run.outOfTime]) : pending);
    } catch (err) {
      return this.#failed(err, node.step, run, records, input, startedAt);
    }
    const clock = Date.now();
    const end = this.#record(outcome, node.step, records, input, run, i, startedAt, clock);
    return end ?? this.#runList(nodes, records, outcome.output, run, depth, i + 1, clock);
  }

  /** A step holding steps, then the rest of its list. */
  async #flowThenRest(
    node: Exclude<Node, LeafNode>,
    nodes: Node[],
    records: StepResult[],
    input: unknown,
    run: Run,
    depth: number,
    i: number,
  ): Promise<End> {
    const end = await this.#runFlow(node, records, input, run, depth);
    if (end.end === 'done') return this.#runList(nodes, records, end.output, run, depth, i + 1);
    if (end.end === 'parked') placeParked(end, i, input, run);
    return end;
  }

  /**
   * Records a step's outcome (at index `i` of its list, finished at `clock`); the list's end when it
   * ends there (parked or filtered), undefined when the list goes on with its output.
   */
  #record(
    outcome: StepOutcome,
    step: Step,
    records: StepResult[],
    input: unknown,
    run: Run,
    i: number,
    startedAt: string,
    clock: number,
  ): End | undefined {
    const parked = outcome.park !== undefined;
    const output = parked ? null : outcome.output;
    const record: StepResult = {
      name: step.name,
      type: step.type,
      status: parked ? 'waiting' : outcome.filtered ? 'filtered' : 'succeeded',
      input,
      output,
      error: null,
      startedAt,
      finishedAt: isoAt(clock),
    };
    if (outcome.details) Object.assign(record, outcome.details);
    records.push(record);
    if (outcome.park) {
      run.parkState = outcome.park.state;
      const end: End = { end: 'parked', until: outcome.park.until, at: [{ i: 0 }] };
      placeParked(end, i, input, run);
      return end;
    }
    defineEntry(run.outputs, step.name, output);
    if (outcome.response && run.response === undefined) {
      run.response = outcome.response;
      run.ctx.onRespond?.(outcome.response);
    }
    return outcome.filtered ? { end: 'filtered', output } : undefined;
  }

  /** Records a step that failed (or throws OutOfSlice: see #stepError); the list's end. */
  #failed(err: unknown, step: Step, run: Run, records: StepResult[], input: unknown, startedAt: string): End {
    const error = this.#stepError(err, step, run);
    const failedOutput = err instanceof StepFailure && err.output !== undefined ? err.output : null;
    const record: StepResult = {
      name: step.name,
      type: step.type,
      status: 'failed',
      input,
      output: failedOutput,
      error,
      startedAt,
      finishedAt: nowIso(),
    };
    if (err instanceof StepFailure && err.details) Object.assign(record, err.details);
    records.push(record);
    return { end: 'failed', error };
  }

  /** A step's error as recorded; past the budget, whatever the step threw is a consequence: say why. */
  #stepError(err: unknown, step: Step, run: Run): ExecutionError {
    // A nested step gave the slice up: the whole run is handed to an executor, not failed here.
    if (err instanceof OutOfSlice) throw err;
    const timedOut =
      run.budget?.signal.aborted || err instanceof DeadlineReached || err instanceof ExecutionTimeout;
    // A sliced run stopped by an expression's own time budget (JSONata's D1012) is given up too: on
    // a machine that descheduled it, that budget could fire before the slice's deadline was seen,
    // and the executor, running it again with the whole budget, decides what it really does.
    const expressionTimedOut = err instanceof ExpressionError && err.code === 'budget_time';
    if (run.sliced && (timedOut || expressionTimedOut)) throw new OutOfSlice(run.ctx.sliceMs!);
    const cause = timedOut ? new ExecutionTimeout(run.timeoutMs) : err;
    const error = { step: step.name, ...describeError(cause) };
    // The error is stored twice (the execution's and the step's) and told to error workflows.
    if (error.message.length > MAX_ERROR_MESSAGE)
      error.message = `${error.message.slice(0, MAX_ERROR_MESSAGE)}… (${error.message.length} characters in all)`;
    return error;
  }

  /** Renders the step's configuration and runs it; a promise only when rendering or the step needs one. */
  #runStep(
    node: LeafNode,
    scope: Scope,
    run: Run,
    resume: { state: unknown } | undefined,
  ): StepOutcome | Promise<StepOutcome> {
    const rendered = renderNow(node.template, scope);
    return rendered instanceof Promise
      ? rendered.then((config) =>
          this.#runRendered(node, config as Record<string, unknown>, scope, run, resume),
        )
      : this.#runRendered(node, rendered as Record<string, unknown>, scope, run, resume);
  }

  #runRendered(
    node: LeafNode,
    config: Record<string, unknown>,
    scope: Scope,
    run: Run,
    resume: { state: unknown } | undefined,
  ): StepOutcome | Promise<StepOutcome> {
    const { type } = node;
    if (node.literal) for (const [k, v] of node.literal) config[k] = v;
    if (node.check && !node.check.Check(config)) {
      const [first] = schemaErrors(node.check, config);
      throw new StepFailure(
        `After expressions, ${first?.field || 'the step'} ${first?.message ?? 'is not valid'}.`,
        {
          ...(first?.field ? { field: first.field } : {}),
        },
      );
    }
    const credentials = run.ctx.credentials;
    // Set field by field: spreads of optional fields were runtime calls on every step.
    const stepCtx: StepContext = {
      input: scope.input,
      signal: run.signal,
      outbound: this.#outbound,
      scope,
      limits: this.#limits,
      step: node.step.name,
    };
    if (credentials) stepCtx.credentials = credentials;
    if (resume) stepCtx.resume = resume;
    if (run.indices.length > 0) stepCtx.indices = run.indices.slice();
    return type.run(config, stepCtx);
  }

  /** A step holding steps: `if`, `switch` (one branch) or `forEach` (its steps per element). */
  async #runFlow(
    node: Exclude<Node, LeafNode>,
    records: StepResult[],
    input: unknown,
    run: Run,
    depth: number,
  ): Promise<End> {
    const { step } = node;
    const frame = run.resumeAt?.[depth];
    let record: StepResult;
    if (frame) {
      // Resuming inside it: its record (with the nested records so far) is the last one.
      record = records[records.length - 1]!;
    } else {
      record = {
        name: step.name,
        type: step.type,
        status: 'succeeded',
        input,
        output: null,
        error: null,
        startedAt: nowIso(),
        finishedAt: '',
      };
      records.push(record);
    }
    let end: End;
    try {
      if (run.budget?.signal.aborted || Date.now() > run.until) throw new ExecutionTimeout(run.timeoutMs);
      const at: FlowAt = { record, input, run, depth, frame };
      end = node.kind === 'forEach' ? await this.#runForEach(node, at) : await this.#runBranch(node, at);
    } catch (err) {
      end = { end: 'failed', error: this.#stepError(err, step, run) };
    }
    record.finishedAt = nowIso();
    switch (end.end) {
      case 'done':
        record.status = 'succeeded';
        record.output = end.output;
        defineEntry(run.outputs, step.name, end.output);
        break;
      case 'filtered':
        record.status = 'filtered';
        break;
      case 'failed':
        record.status = 'failed';
        record.error = end.error;
        break;
      case 'parked':
        record.status = 'waiting';
        break;
    }
    return end;
  }

  /** `if` and `switch`: choose the branch (or, resuming, take the one that ran), run its steps. */
  async #runBranch(node: IfNode | SwitchNode, at: FlowAt): Promise<End> {
    const { record, input, run, depth, frame } = at;
    let branch: Branch | undefined;
    if (frame) {
      branch = frame.branch;
    } else {
      run.scope.input = input;
      branch = node.kind === 'if' ? await chooseIf(node, run.scope) : await chooseCase(node, run.scope);
    }
    const steps = branch === undefined ? undefined : branchSteps(node, branch);
    if (branch !== undefined) record.branch = branch;
    record.steps ??= [];
    // No branch (a switch without a match or default; an if without else): the input goes on.
    if (!steps) return { end: 'done', output: input };
    const end = await this.#runList(steps, record.steps, input, run, depth + 1);
    if (end.end === 'parked') end.at.unshift({ i: 0, branch: branch! });
    return end;
  }

  /** `forEach`: its steps once per element, with `$item` and `$index`; the output gathers each iteration's. */
  async #runForEach(node: ForEachNode, at: FlowAt): Promise<End> {
    const { record, input, run, depth, frame } = at;
    const scope = run.scope;
    let items: unknown[];
    let outputs: unknown[];
    let start = 0;
    if (frame?.each) {
      ({ items, outputs } = frame.each);
      start = frame.each.index;
    } else {
      scope.input = input;
      const value = await renderTemplate(node.items, scope);
      if (!Array.isArray(value))
        throw new StepFailure(`items must be an array, but it gave ${describeValue(value)}.`, {
          field: '/items',
        });
      if (value.length > this.#maxItems)
        throw new StepFailure(
          `items has ${value.length} elements; a forEach runs over at most ${this.#maxItems} (HOOKFLOW_FOREACH_MAX_ITEMS).`,
          { field: '/items' },
        );
      items = value;
      outputs = [];
      record.iterations = [];
      record.iterationCount = 0;
    }
    record.iterations ??= [];
    const iterations = record.iterations;
    // An inner loop's $item/$index shadow the outer one's, which come back when it ends.
    const outer = { item: scope.item, index: scope.index };
    const level = run.indices.length;
    try {
      for (let index = start; index < items.length; index++) {
        const element = items[index];
        scope.item = element;
        scope.index = index;
        run.indices[level] = index;
        let iteration: IterationResult;
        const resuming = run.resumeAt !== undefined && index === start;
        const kept = index < MAX_RECORDED_ITERATIONS;
        if (resuming && kept && iterations[iterations.length - 1]?.index === index) {
          iteration = iterations[iterations.length - 1]!;
        } else {
          iteration = { index, status: 'succeeded', steps: [] };
          if (kept) iterations.push(iteration);
        }
        record.iterationCount = index + 1;
        const end = await this.#runList(node.steps, iteration.steps, element, run, depth + 1);
        switch (end.end) {
          case 'done':
            iteration.status = 'succeeded';
            outputs.push(end.output);
            break;
          case 'filtered':
            // A filter inside a loop drops the element: the iteration ends, adding nothing.
            iteration.status = 'filtered';
            break;
          case 'failed':
            iteration.status = 'failed';
            return end;
          case 'parked':
            iteration.status = 'waiting';
            end.at.unshift({ i: 0, each: { index, items, outputs } });
            return end;
        }
      }
    } finally {
      scope.item = outer.item;
      scope.index = outer.index;
      run.indices.length = level;
    }
    return { end: 'done', output: outputs };
  }

  /**
   * Whether this workflow version may run before its commit, in a short slice on a thread that
   * serves others (queue/pure-run.ts, webhooks/ingest.ts): only steps declared `pure` (no
   * effect outside the execution, so until the commit nothing happened), nested ones included,
   * and no expression a deadline cannot interrupt (a regular expression, `$eval`:
   * expressions.ts). The others run on the executor's thread, which is stopped when one gets stuck.
   */
  runsBeforeCommit(workflow: Workflow): boolean {
    try {
      const compiled = this.#compile(workflow);
      return compiled.pure && !compiled.uninterruptible;
    } catch {
      return false;
    }
  }

  /**
   * Whether a run of `workflow` has no effect outside the execution (no network, no wait): every
   * step pure or contained (`code`), whatever its expressions. Such a run may be abandoned and done
   * again unseen, so a batch may run it inside its transaction, on the executor's thread
   * (queue/pure-batch.ts); one that is also quick and interruptible runs before its commit instead
   * (`runsBeforeCommit`).
   */
  runsWithoutEffects(workflow: Workflow): boolean {
    try {
      return this.#compile(workflow).contained;
    } catch {
      return false;
    }
  }

  #compile(workflow: Workflow): Compiled {
    // By object first: a version is loaded once and kept, and a webhook request asks twice
    // (runsBeforeCommit, run); the key below costs a string to build and hash each time.
    let compiled = this.#compiledObjects.get(workflow);
    if (compiled) return compiled;
    const key = `${workflow.id}@${workflow.version}`;
    compiled = this.#compiled.get(key);
    if (compiled) {
      this.#compiledObjects.set(workflow, compiled);
      return compiled;
    }
    const acc = { pure: true, uninterruptible: false, contained: true };
    const nodes = this.#compileList(workflow.steps, acc);
    compiled = { nodes, ...acc };
    if (this.#compiled.size >= MAX_CACHED_VERSIONS)
      this.#compiled.delete(this.#compiled.keys().next().value!);
    this.#compiled.set(key, compiled);
    this.#compiledObjects.set(workflow, compiled);
    return compiled;
  }

  #compileList(
    steps: readonly unknown[],
    acc: { pure: boolean; uninterruptible: boolean; contained: boolean },
  ): Node[] {
    return steps.map((s) => {
      const step = s as Step;
      const type = stepType(step.type);
      if (!type)
        throw new StepFailure(
          `Step "${step.name}" has type "${step.type}", which this hookflow does not know.`,
        );
      if (type.pure !== true) acc.pure = false;
      if (type.pure !== true && type.contained !== true) acc.contained = false;
      const expr = (value: unknown, field: string): Template => {
        const { template, errors } = compileTemplate(value, field, this.#budget);
        if (errors[0])
          throw new StepFailure(`Step "${step.name}": ${errors[0].message}`, { field: errors[0].field });
        if (hasUninterruptible(template)) acc.uninterruptible = true;
        return template;
      };
      const list = (value: unknown) => this.#compileList(Array.isArray(value) ? value : [], acc);
      // A list a step may leave out (`if`'s `else`, `switch`'s `default`) stays absent.
      const optionalList = (value: unknown) => (value === undefined ? undefined : list(value));
      switch (step.type) {
        case 'if':
          return {
            kind: 'if',
            step,
            condition: expr(step.condition, '/condition'),
            thenSteps: list(step.then),
            elseSteps: optionalList(step.else),
          } satisfies IfNode;
        case 'switch':
          return {
            kind: 'switch',
            step,
            value: expr(step.value, '/value'),
            cases: (step.cases as Record<string, unknown>[]).map((c, i) => ({
              ...(Object.hasOwn(c, 'equals') ? { equals: { value: c.equals } } : {}),
              ...(Object.hasOwn(c, 'when') ? { when: expr(c.when, `/cases/${i}/when`) } : {}),
              steps: list(c.steps),
            })),
            default: optionalList(step.default),
          } satisfies SwitchNode;
        case 'forEach':
          return {
            kind: 'forEach',
            step,
            items: expr(step.items, '/items'),
            steps: list(step.steps),
          } satisfies ForEachNode;
      }
      const config = stepConfig(step);
      let literal: [string, unknown][] | undefined;
      if (type.literal) {
        literal = [];
        for (const k of type.literal)
          if (Object.hasOwn(config, k)) {
            literal.push([k, config[k]]);
            delete config[k];
          }
      }
      const template = expr(config, '');
      const check = renderedCheckNeeded(type, template, literal) ? validators(type).rendered : undefined;
      return { kind: 'leaf', step, type, template, literal, check } satisfies LeafNode;
    });
  }

  close(): Promise<void> {
    return this.#outbound.close();
  }
}

/** The run's result from how its top-level list ended. */
function runResult(end: End, run: Run, records: StepResult[], outputs: Record<string, unknown>): RunResult {
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
          steps: outputs,
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

/** runResult once the list has ended, the execution's timer cleared either way. */
async function resultLater(
  end: Promise<End>,
  run: Run,
  records: StepResult[],
  outputs: Record<string, unknown>,
  timer: NodeJS.Timeout | undefined,
): Promise<RunResult> {
  try {
    return runResult(await end, run, records, outputs);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** A step parked at index `i` of a list whose step got `input`: its frame says where it stands. */
function placeParked(end: Extract<End, { end: 'parked' }>, i: number, input: unknown, run: Run): void {
  const at = end.at[0]!;
  at.i = i;
  // The trigger item is never copied into the checkpoint: the executor passes it again.
  if (input === run.item) at.t = 1;
  else at.input = input;
}

/** `if`: true → `then`; false or nothing → `else`; anything else is a mistake, said as `filter` says it. */
async function chooseIf(node: IfNode, scope: Scope): Promise<Branch> {
  const value = await renderTemplate(node.condition, scope);
  return condition(value, '/condition') ? 'then' : 'else';
}

/** `switch`: the first case whose `equals` equals `value` (JSON equality) or whose `when` is true. */
async function chooseCase(node: SwitchNode, scope: Scope): Promise<Branch | undefined> {
  let value: unknown;
  let rendered = false;
  for (let i = 0; i < node.cases.length; i++) {
    const c = node.cases[i]!;
    if (c.equals) {
      if (!rendered) {
        value = await renderTemplate(node.value, scope);
        rendered = true;
      }
      if (jsonEqual(value, c.equals.value)) return i;
    } else if (c.when && condition(await renderTemplate(c.when, scope), `/cases/${i}/when`)) {
      return i;
    }
  }
  return node.default ? 'default' : undefined;
}

function branchSteps(node: IfNode | SwitchNode, branch: Branch): Node[] | undefined {
  if (node.kind === 'if')
    return branch === 'then' ? node.thenSteps : branch === 'else' ? node.elseSteps : undefined;
  if (branch === 'default') return node.default;
  return typeof branch === 'number' ? node.cases[branch]?.steps : undefined;
}

/** A condition's value: true, or false/nothing; anything else fails the step naming the field. */
function condition(value: unknown, field: string): boolean {
  if (value === true) return true;
  if (value === false || value === undefined || value === null) return false;
  throw new StepFailure(
    `The condition must be true or false, but it gave ${describeValue(value)}. Wrap it in $boolean(…) to test whether a value is present.`,
    { field },
  );
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  // Measured first: a value may be far bigger as JSON than in memory (model/record-json.ts).
  const size = new JsonSizer().size(value, PREVIEW_MAX);
  if (size > PREVIEW_MAX) {
    const head = typeof value === 'string' ? JSON.stringify(value.slice(0, 56)).slice(0, 57) : '…';
    return `${what} (${head}…, more than ${PREVIEW_MAX} bytes as JSON)`;
  }
  const text = JSON.stringify(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  return `${what} (${shown})`;
}

/** An error message is kept to its first this many characters (a `fail` step can say anything). */
const MAX_ERROR_MESSAGE = 16_384;

/** describeValue serialises values up to this size (to show the first 57 characters). */
const PREVIEW_MAX = 4096;

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
