/**
 * The step loop: runs a workflow version's steps in order over one trigger item. Knows nothing of
 * HTTP serving or the database: it gets the workflow and the item and returns what happened. A
 * failing step is data on the result (status `failed`, the step named in `error`), never an
 * exception.
 *
 * Per step: render its configuration's `{{ … }}` expressions against `$` (the previous output),
 * `$trigger`, `$steps` and `$execution`; check the rendered values against the step type's
 * schema; run it; record input, output, status, error and timings. A step holding steps runs its
 * lists with this same loop (flow.ts). The workflow version is compiled once (compile.ts).
 *
 * Sync or async (shared/maybe-promise.ts): a step that answers at once (a pure one) is recorded and
 * the next one runs in the same turn, so a flat workflow of pure steps takes no microtask turn;
 * from the first step that answers with a promise, the rest of its list runs after it, by the
 * same loop.
 */
import { isoAt, nowIso } from '../ids.js';
import type { Step, Workflow } from '../model/workflow.js';
import { DEFAULT_RECORD_MAX_BYTES } from '../model/record-json.js';
import { andThen, isPromise, type MaybePromise } from '../shared/maybe-promise.js';
import { type Compiled, Compiler, type Node, templateAt } from './compile.js';
import { checkDeadline, stepError } from './errors.js';
import { DEFAULT_BUDGET, defineEntry, render } from './expressions.js';
import { type Loop, runHolder } from './flow.js';
import { runResult, type Started, startRun } from './run-state.js';
import { MailTransports } from './mail.js';
import { createOutbound, type Outbound } from './network.js';
import { DEFAULT_FOREACH_MAX_ITEMS } from './steps/flow.js';
import { STEP_TYPES, type StepRegistry } from './steps/index.js';
import { SqlPools, sqlNetworkPolicy } from './sql/pools.js';
import { StepFailure, type StepContext, type StepOutcome } from './steps/types.js';
import type {
  CheckpointLimits,
  End,
  EngineOptions,
  Run,
  RunContext,
  RunResult,
  StepResult,
} from './types.js';
import { schemaErrors } from './validate.js';

export { OutOfSlice } from './errors.js';
export { MAX_RECORDED_ITERATIONS } from './flow.js';
export type { EngineOptions, IterationResult, RunContext, RunResult, StepResult } from './types.js';

/** A waiting execution's checkpoint may hold this many times HOOKFLOW_EXECUTION_RECORD_MAX_BYTES in all. */
export const CHECKPOINT_FACTOR = 8;

/** Where a list stands: its steps, their records, its depth, and the output so far (the next step's input). */
interface ListAt {
  nodes: Node[];
  records: StepResult[];
  depth: number;
  output: unknown;
}

export class Engine {
  readonly #options: EngineOptions;
  readonly #compiler: Compiler;
  readonly #outbound: Outbound;
  readonly #mail: MailTransports;
  readonly #sql: SqlPools;
  readonly #limits: { memoryBytes: number; timeoutMs: number; foreachMaxItems: number };
  readonly #checkpointLimits: CheckpointLimits;
  readonly #loop: Loop = {
    list: (nodes, records, input, run, depth) => this.#runList(nodes, records, input, run, depth),
    context: (node, run, resume) => this.#context(node, run, resume),
  };

  /** `stepTypes`: the registry of step types (the built-in ones unless a test adds its own). */
  constructor(options: EngineOptions & { stepTypes?: StepRegistry }) {
    this.#options = options;
    this.#compiler = new Compiler(
      options.stepTypes ?? STEP_TYPES,
      options.expressionBudget ?? DEFAULT_BUDGET,
    );
    this.#outbound =
      options.outbound ??
      createOutbound({
        allowPrivateNetwork: options.allowPrivateNetwork,
        maxSocketsPerHost: options.httpMaxSocketsPerHost,
      });
    this.#mail = new MailTransports(this.#outbound.policy);
    this.#sql = new SqlPools(sqlNetworkPolicy(options.allowPrivateNetwork, options.sqlPrivateNetworks));
    this.#limits = {
      memoryBytes: (options.codeMemoryMb ?? 64) * 1024 * 1024,
      timeoutMs: options.codeTimeoutMs ?? 1_000,
      foreachMaxItems: options.foreachMaxItems ?? DEFAULT_FOREACH_MAX_ITEMS,
    };
    const recordMaxBytes = options.recordMaxBytes ?? DEFAULT_RECORD_MAX_BYTES;
    this.#checkpointLimits = { recordMaxBytes, stateMaxBytes: CHECKPOINT_FACTOR * recordMaxBytes };
  }

  /** HOOKFLOW_EXECUTION_RECORD_MAX_BYTES: what an execution's record may hold (model/record-json.ts). */
  get recordMaxBytes(): number {
    return this.#checkpointLimits.recordMaxBytes;
  }

  /**
   * Runs the workflow over `item`: the result itself when every step answers at once (set →
   * filter → set: no promise, no microtask turn), else a promise of it. Errors reach the caller
   * one way, as a rejection: OutOfSlice (a sliced run gave up), or a bug.
   */
  run(workflow: Workflow, item: unknown, ctx: RunContext): MaybePromise<RunResult> {
    const started = this.#start(workflow, item, ctx);
    if (!('run' in started)) return started;
    const { run, compiled, records, timer } = started;
    const ended = andThen(run, (r) => this.#runList(compiled.nodes, records, item, r, 0));
    const cleared = () => {
      if (timer) clearTimeout(timer);
    };
    return andThen(
      ended,
      (end) => {
        cleared();
        return runResult(end, run, records);
      },
      (err) => {
        cleared();
        throw err;
      },
    );
  }

  /** A run's state, or its result when it cannot start (a version or a checkpoint it cannot read). */
  #start(workflow: Workflow, item: unknown, ctx: RunContext): RunResult | Started {
    let compiled: Compiled;
    try {
      compiled = this.#compiler.compile(workflow);
    } catch (err) {
      // Saved workflows were validated; this is a version saved by an older hookflow.
      const error =
        err instanceof StepFailure
          ? { message: err.message, ...(err.field ? { field: err.field } : {}) }
          : { message: String(err) };
      return { status: 'failed', steps: [], error, output: null };
    }
    return startRun(
      workflow,
      compiled,
      item,
      ctx,
      this.#options.executionTimeoutMs,
      this.#checkpointLimits,
      this.#options.resumeUrls,
    );
  }

  /**
   * Runs a step list from its start (or, resuming, from the checkpoint's step at this depth), each
   * step on the previous one's output, recording into `records`. `depth`: 0 for the top level.
   */
  #runList(nodes: Node[], records: StepResult[], input: unknown, run: Run, depth: number): MaybePromise<End> {
    const list: ListAt = { nodes, records, depth, output: input };
    const frame = run.resumeAt?.[depth];
    if (frame) list.output = frame.t === 1 ? run.item : frame.input;
    return this.#steps(list, frame?.i ?? 0, run);
  }

  /** The loop: the steps of `list` from index `i` on; the list's end. */
  #steps(list: ListAt, i: number, run: Run): MaybePromise<End> {
    for (; i < list.nodes.length; i++) {
      const ended = this.#step(list, i, run);
      if (isPromise(ended)) {
        const next = i + 1;
        return ended.then((end) => end ?? this.#steps(list, next, run));
      }
      if (ended) return ended;
    }
    return { end: 'done', output: list.output };
  }

  /** Runs step `i` of `list` on `list.output`: undefined when the list goes on (with its output there), else its end. */
  #step(list: ListAt, i: number, run: Run): MaybePromise<End | undefined> {
    const node = list.nodes[i]!;
    const input = list.output;
    if (node.lists)
      return andThen(runHolder(node, list.records, input, run, list.depth, this.#loop), (end) => {
        if (end.end === 'done') {
          list.output = end.output;
          return undefined;
        }
        if (end.end === 'parked') placeParked(end, i, input, run);
        return end;
      });
    const { step } = node;
    let startedAt: string | undefined;
    let resume: { state: unknown } | undefined;
    if (run.resumeAt) {
      // This is the parked step: it runs again with its state, keeping its first start.
      resume = { state: run.parkState };
      run.resumeAt = undefined;
      const last = list.records[list.records.length - 1];
      if (last?.name === step.name && last.status === 'waiting') {
        list.records.pop();
        startedAt = last.startedAt;
      }
    }
    const now = Date.now();
    startedAt ??= isoAt(now);
    // The hot path of every flat workflow, andThen written out: its three closures cost ~50 ns a
    // step (in-process loop over set → filter → set, ~2 µs a run).
    let outcome: MaybePromise<StepOutcome>;
    try {
      checkDeadline(run, now);
      run.scope.input = input;
      const config = render(node.template, run.scope);
      outcome = isPromise(config)
        ? config.then((c) => this.#runRendered(node, c as Record<string, unknown>, run, resume))
        : this.#runRendered(node, config as Record<string, unknown>, run, resume);
    } catch (err) {
      return this.#failed(err, step, run, list.records, input, startedAt);
    }
    if (!isPromise(outcome)) return this.#record(outcome, step, list, input, run, i, startedAt);
    const at = startedAt;
    // A step that waits on the outside world is raced against the execution's budget. It gave its
    // compute slot up while it waits (`#runRendered`): the run goes on once it holds one again.
    const compute = run.ctx.compute;
    return (run.outOfTime ? Promise.race([outcome, run.outOfTime]) : outcome).then(
      (o) =>
        compute
          ? andThen(compute.acquire(), () => this.#record(o, step, list, input, run, i, at))
          : this.#record(o, step, list, input, run, i, at),
      (err) =>
        compute
          ? andThen(compute.acquire(), () => this.#failed(err, step, run, list.records, input, at))
          : this.#failed(err, step, run, list.records, input, at),
    );
  }

  #runRendered(
    node: Node,
    config: Record<string, unknown>,
    run: Run,
    resume: { state: unknown } | undefined,
  ): MaybePromise<StepOutcome> {
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
    const outcome = node.type.run(config, this.#context(node, run, resume));
    // A step answering a promise waits on something outside this run (an outbound call, a timer):
    // the compute slot goes to another execution meanwhile (SPEC 7d). A contained step (`code`)
    // answers a promise too, but computes meanwhile (on its sandbox thread): it keeps the slot.
    if (isPromise(outcome) && !node.type.contained) run.ctx.compute?.release();
    return outcome;
  }

  /** The context a step's `run` gets. */
  #context(node: Node, run: Run, resume: { state: unknown } | undefined): StepContext {
    const scope = run.scope;
    // Set field by field: spreads of optional fields were runtime calls on every step.
    const ctx: StepContext = {
      input: scope.input,
      signal: run.signal,
      outbound: this.#outbound,
      mail: this.#mail,
      scope,
      limits: this.#limits,
      step: node.step.name,
    };
    if (run.ctx.credentials) {
      ctx.credentials = run.ctx.credentials;
      ctx.sql = this.#sql;
    }
    if (this.#options.files) ctx.files = this.#options.files;
    if (run.secrets.length > 0) ctx.secrets = run.secrets;
    if (run.ctx.tokens) ctx.tokens = run.ctx.tokens;
    if (this.#options.services) ctx.services = this.#options.services;
    if (resume) ctx.resume = resume;
    if (run.indices.length > 0) ctx.indices = run.indices.slice();
    if (node.lists) ctx.render = (field) => render(templateAt(node.template, field), scope);
    return ctx;
  }

  /** Records a step's outcome (at index `i` of its list): undefined when the list goes on, else its end. */
  #record(
    outcome: StepOutcome,
    step: Step,
    list: ListAt,
    input: unknown,
    run: Run,
    i: number,
    startedAt: string,
  ): End | undefined {
    const parked = outcome.park !== undefined;
    // With secrets, every form of their values is taken out of the output (which later steps
    // see) and the record, before either is kept (SPEC 7e: "***" wherever a secret was put).
    const scrub = run.scrub;
    const output = parked ? null : scrub ? scrub.value(outcome.output) : outcome.output;
    const record: StepResult = {
      name: step.name,
      type: step.type,
      status: parked ? 'waiting' : outcome.filtered ? 'filtered' : 'succeeded',
      input,
      output,
      error: null,
      startedAt,
      finishedAt: nowIso(),
    };
    if (outcome.details) Object.assign(record, scrub ? scrub.value(outcome.details) : outcome.details);
    list.records.push(record);
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
    list.output = output;
    return outcome.filtered ? { end: 'filtered', output } : undefined;
  }

  /** Records a step that failed (or throws OutOfSlice: see stepError); the list's end. */
  #failed(err: unknown, step: Step, run: Run, records: StepResult[], input: unknown, startedAt: string): End {
    const scrub = run.scrub;
    const error = stepError(err, step.name, run);
    if (scrub) error.message = scrub.value(error.message) as string;
    const failed = err instanceof StepFailure && err.output !== undefined ? err.output : null;
    const failedOutput = scrub ? scrub.value(failed) : failed;
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
    if (err instanceof StepFailure && err.details)
      Object.assign(record, scrub ? scrub.value(err.details) : err.details);
    records.push(record);
    return { end: 'failed', error };
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
      const compiled = this.#compiler.compile(workflow);
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
      return this.#compiler.compile(workflow).contained;
    } catch {
      return false;
    }
  }

  /** A credential changed or was deleted: the `sql` and `email` steps' pools of its connections close. */
  forgetCredential(id: string): Promise<void> {
    this.#mail.forget(id);
    return this.#sql.forget(id);
  }

  /** Whether some expression of `workflow` names `$vars` or `$secrets` (the run needs RunContext.variables). */
  usesVariables(workflow: Workflow): boolean {
    try {
      return this.#compiler.compile(workflow).variables;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    this.#mail.close();
    return Promise.all([this.#outbound.close(), this.#sql.close()]).then(() => undefined);
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
