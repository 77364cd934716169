/**
 * What a step type is: a name, the TypeBox schema of its own configuration fields, where it keeps
 * nested step lists (if it holds steps), whether it is pure, and `run`. The registry (index.ts)
 * lists the types; run.ts renders a step's expressions and hands the result to `run`. A step type
 * knows nothing of the database, the queue or HTTP serving.
 */
import Type, { type Static, type TSchema, type TUnsafe } from 'typebox';
import type { FieldError } from '../../errors.js';
import type { RunCredentials, TokenSource } from '../credentials.js';
import type { Scope } from '../expressions.js';
import type { MailTransports } from '../mail.js';
import type { FileStore } from '../file-store.js';
import type { Outbound } from '../network.js';
import type { SqlPools } from '../sql/pools.js';
import type { EngineServices } from '../services.js';
import type { MaybePromise } from '../../shared/maybe-promise.js';

export interface StepContext {
  /** The previous step's output (the trigger item for the first step). */
  input: unknown;
  /** Aborted when the execution's time budget is spent. */
  signal: AbortSignal;
  /** Outbound HTTP: which addresses may be reached, and the connection pool that enforces it. */
  outbound: Outbound;
  /** SMTP for `email` steps (engine/mail.ts): one pooled transport per credential, on the same network policy. */
  mail?: MailTransports;
  /**
   * Set when this step parked (StepOutcome.park) and the run now continues from that checkpoint:
   * `state` is what the step gave with `park`. The step runs again with the same input and its
   * configuration rendered again; it decides what resuming means (a `wait` is done; an `http`
   * retry makes its next attempt).
   */
  resume?: { state: unknown };
  /**
   * The clear values of the run's secret variables (SPEC 7e): the engine scrubs them from what
   * the step records and outputs; a step that stores or encodes bytes (the `http` step's base64
   * bodies) scrubs them itself before, as it does a credential's.
   */
  secrets?: readonly string[];
  /** Files between steps (engine/files.ts): read them, store new ones. Absent when the engine has no store. */
  files?: FileStore;
  /** The run's credentials, unsealed by the executor (SPEC 7c; engine/credentials.ts), by id. */
  credentials?: RunCredentials;
  /** The engine's database connection pools, one per credential (`sql` steps; steps/sql.ts). */
  sql?: SqlPools;
  /** The access tokens of the run's `oauth2` credentials (engine/credentials.ts TokenSource). */
  tokens?: TokenSource;
  /** The data store and other workflows (engine/services.ts), when the executor gives them. */
  services?: EngineServices;
  /** What expressions see (`$trigger`, `$steps`, `$execution`, the deadline), for steps that hand it on (`code`). */
  scope?: Readonly<Scope>;
  /** The step's name (unique in its workflow), set by the engine. */
  step?: string;
  /**
   * Inside `forEach` loops: the iteration's index in each, outermost first (absent outside any).
   * With `scope.execution.id` and `step`, it names this run of the step within its execution, the
   * same on every attempt and resumption (the `http` step's idempotency key).
   */
  indices?: readonly number[];
  /** The engine's limits (config.engine): the `code` step's, and the most elements a loop runs over. */
  limits?: { memoryBytes: number; timeoutMs: number; foreachMaxItems?: number };
  /**
   * Steps holding steps (StepType.lists) only: renders the field at this JSON pointer inside the
   * step (`/condition`, `/cases/2/when`) against the scope now, so a step renders only what it
   * needs (a `switch` stops at the first case that matches).
   */
  render?(field: string): MaybePromise<unknown>;
}

/** Fields a step type adds to its step record (`http`: `request`, `attempts`), succeeded or failed. */
export type StepDetails = Record<string, unknown>;

export interface StepOutcome {
  output: unknown;
  /** End the run here with status `filtered` (the remaining steps do not run). */
  filtered?: boolean;
  /** The answer to the webhook call (response mode `respondStep`). */
  response?: { status: number; headers: Record<string, string>; body: unknown };
  /**
   * Park the execution until `until` (status `waiting`, no executor slot held): the engine ends
   * the run with a checkpoint (RunResult.resume), and the queue resumes it then, on any executor.
   * The step then runs again with `StepContext.resume = { state }` (`state`: JSON, kept small).
   * `output` is ignored while parked. Used by `wait`, and by `http` retries that pause ≥ 1 s.
   */
  park?: { until: Date; state: unknown };
  /** Added to the step's record. */
  details?: StepDetails;
  /**
   * A step holding steps: the list to run on its input, a JSON pointer inside the step (`/then`,
   * `/cases/1/steps`); the list's output is the step's. A list the step does not have runs nothing
   * (the output is `output`); the record names it (StepResult.branch, shared/step-lists.ts branchOf).
   */
  branch?: string;
  /**
   * A step holding steps: run its first list once per element, with `$item` and `$index`; the
   * step's output gathers each iteration's (a `filter` inside drops the element).
   */
  each?: unknown[];
}

/** A step's own failure: becomes the step's (and the execution's) error, naming the field when there is one. */
export class StepFailure extends Error {
  readonly field: string | undefined;
  /** What the step produced before failing (e.g. the response of a non-2xx request). */
  readonly output: unknown;
  /** Added to the failed step's record (see StepOutcome.details). */
  readonly details: StepDetails | undefined;
  /** A stable code for the error (`sub_workflow_depth`), recorded with it. */
  readonly code: string | undefined;

  constructor(
    message: string,
    opts: { field?: string; output?: unknown; cause?: unknown; details?: StepDetails; code?: string } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StepFailure';
    this.code = opts.code;
    this.field = opts.field;
    this.output = opts.output;
    this.details = opts.details;
    this.code = opts.code;
  }
}

export interface StepType<S extends TSchema = TSchema> {
  type: string;
  /** One sentence for docs and the UI. */
  description: string;
  /**
   * The step's fields besides `name` and `type`. Checked when a workflow is saved (where a field
   * declared with `Expr` may hold a `{{ … }}` text) and again on the rendered values before `run`.
   */
  config: S;
  /**
   * True when `run` has no effect outside the execution (no network, no I/O; CPU only). A workflow
   * of pure steps may run before its execution is stored, and is not raced against a timer.
   */
  pure?: boolean;
  /**
   * True when `run` has no effect outside the execution either, but may take longer than a pure
   * step's slice (the `code` step: CPU in its sandbox, up to HOOKFLOW_CODE_TIMEOUT_MS). A run of
   * such steps can be abandoned and done again without anyone outside telling
   * (Engine.runsWithoutEffects). While its promise is pending it computes (on a thread of its
   * own), so the run keeps its compute slot (engine/run.ts `#runRendered`).
   */
  contained?: boolean;
  /**
   * Fields taken as written, never rendered as `{{ … }}` templates (the `code` step's JavaScript
   * source, where `{{` is just code).
   */
  literal?: readonly string[];
  /**
   * The credential types the step's `credential` field may name (`http`: bearer, header, basic,
   * query; `email`: smtp; `sql`: postgres, mysql). A workflow naming another type is refused on save
   * (workflows/references.ts).
   */
  credentialTypes?: readonly string[];
  /**
   * The fields whose expressions may use `$secrets` (SPEC 7e), as JSON pointers inside the step;
   * each covers what is nested in it (`/headers` covers `/headers/authorization`). Anywhere else a
   * `$secrets` is refused on save and unbound at run time.
   */
  secretFields?: readonly string[];
  /** Checks the schema cannot express; fields are JSON pointers inside the step. */
  check?(config: Static<S>): FieldError[];
  /**
   * Where a step of this type keeps nested step lists, as paths inside the step
   * (shared/step-lists.ts): `['then', 'else']`; `*` stands for each element of an array, as in
   * `cases`, `*`, `steps` joined by slashes. Validation checks each list like the top level, the
   * engine compiles and runs them with the same loop, and the walk over a workflow's steps and
   * the UI read them (from shared/step-catalog.ts, `npm run catalog`). Such a step's `run` gets
   * its fields as stored and renders what it needs (`ctx.render`); it answers with the list to
   * run (`branch`) or the elements to run its first list for (`each`).
   */
  lists?: readonly string[];
  /**
   * A step with nothing to wait for (set, filter…) returns its outcome itself: the engine awaits
   * only promises, so a flat workflow of such steps pays no microtask turn per step.
   */
  run(config: Static<S>, ctx: StepContext): MaybePromise<StepOutcome>;
}

/** Whether `field` (a JSON pointer inside a step of `type`) may use `$secrets`. */
export function secretsAllowedIn(type: Pick<StepType, 'secretFields'>, field: string): boolean {
  return (type.secretFields ?? []).some((f) => field === f || field.startsWith(`${f}/`));
}

/** Declare a step type with its config type inferred from the schema. */
export const defineStep = <S extends TSchema>(step: StepType<S>): StepType<S> => step;

const EXPRESSION_MARK = 'x-hookflow-expression';

/**
 * A non-string field that may also be written as a `{{ … }}` expression: accepted as such when a
 * workflow is saved; after rendering it must be a `T` (see `renderedSchema`).
 */
export const Expr = <T extends TSchema>(schema: T): TUnsafe<Static<T>> =>
  Type.Unsafe<Static<T>>({ anyOf: [schema, Type.String({ pattern: '\\{\\{' })], [EXPRESSION_MARK]: true });

/** The schema a rendered configuration must match: every `Expr(T)` becomes `T`. */
export function renderedSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(renderedSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const s = schema as Record<string, unknown>;
  if (s[EXPRESSION_MARK] === true && Array.isArray(s.anyOf)) return renderedSchema(s.anyOf[0]);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) out[k] = renderedSchema(v);
  return out;
}

/** Header names as HTTP allows them (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A map of header name → value (values may be expressions; non-strings are sent as JSON). */
export const HeaderMap = () =>
  Type.Record(Type.String(), Type.Unknown(), {
    propertyNames: { pattern: HEADER_NAME.source },
    maxProperties: 100,
  });
