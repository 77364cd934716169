/**
 * The engine's types: what a run returns (RunResult, StepResult), what its caller passes
 * (RunContext, EngineOptions), and the state the step loop (run.ts) and the steps holding steps
 * (flow.ts) share while a run goes on (Run, End).
 */
import type { ExecutionError, ExecutionMode } from '../model/execution.js';
import type { ResumeUrlOptions } from './resume-url.js';
import type { CheckpointLog, CheckpointWrite, Frame } from './checkpoint.js';
import type { RunCredentials, Scrubber, TokenSource } from './credentials.js';
import type { ExpressionBudget, Scope } from './expressions.js';
import type { FileStore } from './file-store.js';
import type { Outbound } from './network.js';
import type { EngineServices } from './services.js';
import type { MaybePromise } from '../shared/maybe-promise.js';

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
  /** `http`, `email`: each attempt, `{at, status}` or `{at, error}` (SPEC 7c retry). */
  attempts?: unknown[];
  /** `email`: the message as sent (from, to, cc, bcc, replyTo, subject, attachments; never the body) and the server's last reply. */
  mail?: unknown;
  /** `email`: the recipients the server refused, each with its reply. */
  refused?: unknown[];
  /** `email`: the refusing reply `{code, text, command}` of a failed step. */
  reply?: unknown;
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
  mode: ExecutionMode;
  attempt?: number;
  /** Called once, when the first `respond` step has run (the execution goes on). */
  onRespond?: (response: NonNullable<RunResult['response']>) => void;
  /** The credentials the version's `http` steps name, unsealed for this run (engine/credentials.ts). */
  credentials?: RunCredentials;
  /** Where `http` steps get the access tokens of `oauth2` credentials (the executor's; engine/credentials.ts). */
  tokens?: TokenSource;
  /**
   * Variables (SPEC 7e) for this run: `vars` are `$vars` in every expression; `secrets` (unsealed
   * by the executor) are `$secrets`, only in the fields their step type allows
   * (StepType.secretFields), and scrubbed to "***" from everything the run records.
   */
  variables?: RunVariables;
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
  /**
   * The compute slot this run holds (queue/compute-slots.ts): given up while a step waits on a
   * promise (an outbound call), taken again before the run goes on. Without one the run never
   * waits for a slot.
   */
  compute?: ComputeSlot;
}

/** A run's share of the executor's compute slots (RunContext.compute). */
export interface ComputeSlot {
  /** Give the slot up (nothing when it is not held). */
  release(): void;
  /** Hold a slot again: at once when one is free (or it is held), else a promise of it. */
  acquire(): MaybePromise<void>;
}

export interface RunVariables {
  vars: Record<string, string>;
  secrets: Record<string, string>;
}

export interface EngineOptions {
  /** Where files between steps are read from and stored (engine/files.ts); none: steps using files fail. */
  files?: FileStore;
  /** Let `http` steps reach loopback, link-local and private addresses. */
  allowPrivateNetwork: boolean;
  /**
   * HOOKFLOW_SQL_PRIVATE_NETWORKS: private ranges (CIDR) `sql` steps may reach even when
   * allowPrivateNetwork is false (a company's database on its private network).
   */
  sqlPrivateNetworks?: readonly string[];
  /** Budget of one execution, all steps together. */
  executionTimeoutMs: number;
  /** Budget of one expression evaluation. */
  expressionBudget?: ExpressionBudget;
  /** Outbound HTTP (tests pass their own policy); made from allowPrivateNetwork otherwise. */
  outbound?: Outbound;
  /** The data store and other workflows, for `store` and `workflow` steps (engine/services.ts). */
  services?: EngineServices;
  /** `$execution.resumeUrl` (engine/resume-url.ts): the base URL and the derived key. */
  resumeUrls?: ResumeUrlOptions;
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

export type Branch = NonNullable<StepResult['branch']>;

/** How a step list ended. */
export type End =
  | { end: 'done'; output: unknown }
  /** A `filter` said no: the run ends `filtered`, or inside a `forEach` the iteration does. */
  | { end: 'filtered'; output: unknown }
  | { end: 'failed'; error: ExecutionError }
  /** A step parked: `at` is filled in as the lists return, innermost first. */
  | { end: 'parked'; until: Date; at: Frame[] };

/** The bounds of an execution's checkpoint (CheckpointLog). */
export interface CheckpointLimits {
  recordMaxBytes: number;
  stateMaxBytes: number;
}

/** One run's state, shared by the nested step lists. */
export interface Run {
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
  /** The clear values of the run's secret variables (StepContext.secrets). */
  secrets: string[];
  /** Takes every form of them out of what a step records and outputs; none without secrets. */
  scrub: Scrubber | undefined;
}
