/**
 * What steps reach beyond the execution through hookflow itself rather than the network: the data
 * store (`store` step) and other workflows (`workflow` step). The engine knows no database, so it
 * is handed an implementation (EngineOptions.services): the executor's (executions/services.ts,
 * on the event loop, over the store), reached from the engine thread by messages
 * (queue/engine-runner.ts). A step without them (a test's engine) fails saying so.
 */

export type DataStoreOp = 'get' | 'set' | 'delete' | 'increment' | 'setIfAbsent';

export interface DataStoreRequest {
  op: DataStoreOp;
  scope: 'workflow' | 'global';
  /** The running workflow (the `workflow` scope's entries are its own). */
  workflowId: string;
  key: string;
  /** `set`, `setIfAbsent`: the value (JSON). */
  value?: unknown;
  /** `increment`: what to add (default 1). */
  by?: number;
  /** `set`, `setIfAbsent`, `increment` (when it creates the entry): the entry expires after this. */
  ttlSeconds?: number;
}

/** get `{found, value}`, set `{value}`, delete `{deleted}`, increment `{value}`, setIfAbsent `{set, value}`. */
export type DataStoreAnswer =
  | { found: boolean; value: unknown }
  | { value: unknown }
  | { deleted: boolean }
  | { set: boolean; value: unknown };

/** A `workflow` step's call: start (or find, when started before) the child execution. */
export interface SubWorkflowRequest {
  /** The calling execution, its workflow and mode (`test` runs the target's draft, as does a chain under one). */
  executionId: string;
  workflowId: string;
  mode: string;
  /** The step's name, and the forEach indices it runs at: with the execution, the child's identity. */
  step: string;
  indices: readonly number[];
  targetWorkflowId: string;
  input: unknown;
}

/** Where a child execution stands. */
export type SubWorkflowState =
  | { status: 'running' }
  | { status: 'succeeded'; output: unknown }
  | { status: 'failed'; error: { message: string; code?: string } };

export interface EngineServices {
  dataStore(request: DataStoreRequest): Promise<DataStoreAnswer>;
  /** Starts the child execution once per request identity; its id. */
  startWorkflow(request: SubWorkflowRequest): Promise<{ executionId: string }>;
  /** Where the child execution stands (`running` until it ends). */
  workflowState(executionId: string): Promise<SubWorkflowState>;
  /** A `wait` for a call or an event: registers it when new, then answers where it stands. */
  waitFor(request: WaitRequest): Promise<WaitState>;
}

/**
 * A refusal by a service the step should record as its error (a value too large, a depth
 * exceeded): its message is for the person reading the execution, `code` is stable.
 */
export class ServiceRefusal extends Error {
  readonly code: string | undefined;
  readonly field: string | undefined;

  constructor(message: string, opts: { code?: string | undefined; field?: string | undefined } = {}) {
    super(message);
    this.name = 'ServiceRefusal';
    this.code = opts.code;
    this.field = opts.field;
  }
}

/**
 * A `wait` for a call or an event (SPEC 7g), as the step asks for it each time it runs: the first
 * time registers it (once per execution, step and forEach iteration, however often the step runs);
 * every time answers where it stands.
 */
export interface WaitRequest {
  executionId: string;
  /** The step's name and the forEach indices it runs at: with the execution, the wait's identity. */
  step: string;
  indices: readonly number[];
  kind: 'call' | 'event';
  /** An event wait: the webhook workflow whose production requests it matches… */
  workflowId?: string;
  /** …the `match` template evaluated against each of them… */
  match?: string;
  /** …and the value it must equal (engine/concurrency.ts `keyText`). */
  key?: string;
  /** When it times out, ISO-8601 (the first registration's stands). */
  expiresAt: string;
}

/** Where a wait stands. */
export type WaitState =
  | { status: 'waiting'; expiresAt: string }
  | { status: 'resumed'; item: unknown }
  | { status: 'timedOut' };
