/**
 * Table types of the one schema shared by SQLite and PostgreSQL. Portable column types only:
 * ids and timestamps are text (ISO-8601 UTC, so they sort as text), flags are integers 0/1,
 * structured values are JSON text; bytes are the dialect's binary type (see store.ts).
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { Role } from '../shared/roles.js';
import type { ExecutionMode } from '../model/execution.js';

export interface WorkflowsTable {
  id: string;
  name: string;
  active: number;
  version: number;
  /**
   * The version production runs (SPEC 1 draft/published); null until first published or
   * activated. Kept on deactivate: it says what ran last.
   */
  published_version: number | null;
  /** JSON of the stored trigger (without the derived URLs). */
  trigger: string;
  /** JSON array of steps. */
  steps: string;
  /** JSON of the workflow's settings (SPEC 1; `errorWorkflowId`), `{}` by default. */
  settings: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface WorkflowVersionsTable {
  workflow_id: string;
  version: number;
  /** JSON of the whole Workflow as saved. */
  definition: string;
  created_at: string;
  /** Who saved it: `token "<name>"` or the account's email; null when unknown (CLI, older rows). */
  saved_by: Generated<string | null>;
}

export interface ApiTokensTable {
  id: string;
  name: string;
  /** sha256 hex of the token: the token itself is shown once and never stored. */
  token_hash: string;
  /** First characters of the token, to tell tokens apart in lists. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  /** The member it belongs to; null: the owner, whoever that is (`hookflow tokens create`). */
  user_id: string | null;
  /** The role it acts with, capped by its member's (SPEC 11b). */
  role: Role;
}

export interface ExecutionsTable {
  id: string;
  workflow_id: string;
  workflow_version: number;
  mode: ExecutionMode;
  /**
   * `waiting`: parked by a step (SPEC 7b `wait`, 7c retry pauses) until `run_after`, holding no
   * executor slot; then claimed like a queued row and resumed from `resume_state`.
   */
  status: 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'filtered' | 'skipped';
  /** JSON of the trigger item. */
  trigger: string;
  /**
   * JSON array of step results, within HOOKFLOW_EXECUTION_RECORD_MAX_BYTES (model/record-json.ts).
   * `[]` while the execution has a checkpoint (`resume_state`): its records so far are in the
   * checkpoint's parts (executionsRepo.withRecordsSoFar reads them there).
   */
  steps: string;
  /** JSON of the error, or null. */
  error: string | null;
  attempt: number;
  retry_of: string | null;
  /** Earliest time a worker may claim it (backoff; when waiting, the time it resumes). */
  run_after: string;
  /** Lease of the worker running it; a lapsed lease makes it claimable again. */
  locked_until: string | null;
  locked_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** JSON array of warnings (schemaCheck "warn"), or null. */
  warnings: string | null;
  /**
   * The head of the engine's checkpoint (engine/checkpoint.ts) of an execution that waited, JSON;
   * its parts are `execution_checkpoints` rows. Set while it waits and kept while its resumed
   * attempt runs (a crash resumes from it again), null otherwise.
   */
  resume_state: Generated<string | null>;
  /** The execution of the error workflow this failed production execution started (SPEC 7c). */
  error_execution_id: Generated<string | null>;
  /**
   * `settings.concurrency` (SPEC 7d) as evaluated when the execution was accepted: its key (null:
   * none, the claim takes it like any other row), the limit of its key then, and its newest-wins
   * value as a number (engine/concurrency.ts `newestNumber`; null: none).
   */
  concurrency_key: Generated<string | null>;
  concurrency_limit: Generated<number | null>;
  newest_value: Generated<number | null>;
  /** Why a `skipped` execution ran no step: `superseded` (newest wins); null otherwise. */
  skip_reason: Generated<string | null>;
  /** A sub-workflow's execution (mode `sub`, SPEC 7f): the execution whose `workflow` step started it. */
  parent_execution_id: Generated<string | null>;
  /** With `parent_execution_id`: that step's name and forEach indices (`name` or `name.0.3`), unique together. */
  parent_step: Generated<string | null>;
  /** How many parents are above it (0: started by a trigger, a retry or a replay). */
  depth: Generated<number>;
}

/**
 * Newest wins (SPEC 7d): per workflow and concurrency key, the highest newest-wins value of an
 * execution that has started. A queued one below it is skipped when it comes to start.
 */
export interface ConcurrencyMarksTable {
  workflow_id: string;
  concurrency_key: string;
  newest: number;
}

/**
 * The parts of a waiting execution's checkpoint (engine/checkpoint.ts), one per park, appended in
 * the transaction that records the park and deleted when the execution finishes: what each park
 * added (values and outputs, as `state`; the records' delta, as `records`; both JSON).
 */
export interface ExecutionCheckpointsTable {
  execution_id: string;
  seq: number;
  state: string;
  records: string;
}

/** Refused webhook calls (webhooks/options/rejections.ts): no body, no credential. */
export interface RejectionsTable {
  id: string;
  workflow_id: string;
  at: string;
  mode: 'test' | 'production';
  code: string;
  message: string;
  method: string;
  ip: string;
}

/**
 * The searchable fields of executions (`settings.searchFields`): one row per execution
 * and declared field holding a scalar, written in the execution's own transaction. Its primary key
 * (workflow_id, path, value, execution_id) is the search's index.
 */
export interface ExecutionFieldsTable {
  workflow_id: string;
  /** The declared path in dots, e.g. `body.order_id`. */
  path: string;
  /** The value's text (execution-search.ts `fieldText`). */
  value: string;
  execution_id: string;
}

/** Credentials of outbound calls (SPEC 7c). */
export interface CredentialsTable {
  id: string;
  name: string;
  /** A type of credentials/model.ts (CREDENTIAL_DATA); the column is free text, no migration per type. */
  type: 'bearer' | 'header' | 'basic' | 'query' | 'smtp' | 'postgres' | 'mysql' | 'oauth2';
  /** The JSON of the type's fields, sealed (SecretBox): never stored in clear. */
  data: string;
  created_at: string;
  updated_at: string;
}

/**
 * The tokens of an `oauth2` credential (SPEC 7e; credentials/oauth2.ts), one row per credential
 * once it was first used or connected. `version` grows with every write of the tokens: a write is
 * a compare-and-set on it. `claimed_by` / `claim_until` is the refresh claim: one process at a time
 * asks the token endpoint, the others wait for its result (a one-time refresh token is spent once).
 */
export interface OAuth2TokensTable {
  credential_id: string;
  state: 'not_connected' | 'connected' | 'needs_reconnect';
  /** Sealed JSON `{accessToken, refreshToken?}`; null when there is none. */
  tokens: string | null;
  expires_at: string | null;
  refreshed_at: string | null;
  last_error: string | null;
  version: number;
  claimed_by: string | null;
  claim_until: string | null;
}

/**
 * Authorizations in progress (authorization code + PKCE): keyed by the sha256 of the `state` sent
 * to the provider, single use, expiring; the PKCE verifier sealed; who asked (the audit row of the
 * connect names them).
 */
export interface OAuth2AuthorizationsTable {
  state_hash: string;
  credential_id: string;
  verifier: string;
  actor_type: 'user' | 'token' | 'system';
  actor_id: string | null;
  actor_name: string;
  created_at: string;
  expires_at: string;
}

/** Variables (SPEC 7e): `value` sealed (SecretBox) when `secret` is 1. */
export interface VariablesTable {
  name: string;
  value: string;
  secret: number;
  created_at: string;
  updated_at: string;
}

export interface IdempotencyKeysTable {
  workflow_id: string;
  key: string;
  execution_id: string;
  expires_at: string;
}

export interface RateLimitsTable {
  /** `<mode>:<workflow id>`. */
  key: string;
  /** Epoch milliseconds (PostgreSQL returns bigint as a string). */
  window_start: number | string;
  count: number;
}

export interface TestListenersTable {
  id: string;
  workflow_id: string;
  keep_listening: number;
  expires_at: string;
  created_at: string;
}

export interface TestEventsTable {
  id: string;
  workflow_id: string;
  execution_id: string | null;
  /** JSON of the trigger item. */
  item: string;
  received_at: string;
}

export interface LearnedSchemasTable {
  workflow_id: string;
  /** JSON of the LearnedSchema (jsonSchema, fields, samples). */
  schema: string;
  updated_at: string;
}

export interface BlobsTable {
  id: string;
  execution_id: string | null;
  sha256: string;
  size: number;
  mime_type: string;
  filename: string;
  data: Uint8Array;
  created_at: string;
}

/** The bytes of a file over 1 MiB, in order (its `blobs` row then holds no data). */
export interface BlobPartsTable {
  blob_id: string;
  seq: number;
  data: Uint8Array;
}

export interface UsersTable {
  id: string;
  email: string;
  /** `scrypt$N$r$p$<salt b64>$<hash b64>` */
  password_hash: string;
  role: Role;
  created_at: string;
}

/** The audit log (SPEC 11b; src/audit): one row per change, written in the change's transaction. */
export interface AuditLogTable {
  /** Time-ordered (UUIDv7): lists page newest first by id. */
  id: string;
  at: string;
  actor_type: 'user' | 'token' | 'system';
  actor_id: string | null;
  actor_name: string;
  action: string;
  target_type: string;
  target_id: string | null;
  target_name: string | null;
  /** The workflow the change is about, for the `workflowId` filter. */
  workflow_id: string | null;
  /** JSON; never a secret. */
  details: string;
  ip: string | null;
}

/** Pending invitations (SPEC 11b; accounts/members.ts): one use, 7 days; never the token itself. */
export interface InvitationsTable {
  id: string;
  /** sha256 hex of the token in the invite link. */
  token_hash: string;
  email: string;
  role: Role;
  /** The member who invited (null once that member is removed). */
  invited_by: string | null;
  created_at: string;
  expires_at: string;
}

export interface SessionsTable {
  /** sha256 hex of the cookie value. */
  id: string;
  user_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

/** First-start setup codes (SPEC 11; accounts/setup-codes.ts): never the code itself. */
export interface SetupCodesTable {
  /** sha256 hex of the code. */
  code_hash: string;
  created_at: string;
  expires_at: string;
}

/** Refused production calls per workflow, minute (ISO, to the minute) and code (src/health). */
export interface RefusalCountsTable {
  workflow_id: string;
  minute: string;
  code: string;
  count: number;
}

/** One trigger alert episode (SPEC 7g): `kind` silence | rejections | schemaDrift. */
export interface TriggerAlertsTable {
  workflow_id: string;
  kind: string;
  episode: string;
  since: string;
  fired_at: string;
  last_seen: string;
  /** JSON: the alert's details. */
  details: string;
  /** The alert workflow's execution; null when none could be started. */
  execution_id: string | null;
}

/**
 * A `wait` for a call or an event (SPEC 7g; executions/waits.ts), one per execution, step and
 * forEach iteration (`step`: executions/sub-workflows.ts `parentStepKey`).
 */
export interface ExecutionWaitsTable {
  execution_id: string;
  step: string;
  kind: 'call' | 'event';
  /** `waiting` until a call or an event resumes it (`resumed`) or its timeout passes (`timed_out`). */
  status: 'waiting' | 'resumed' | 'timed_out';
  /** An event wait: the webhook workflow matched, the `match` template, and the key it must give. */
  workflow_id: string | null;
  match: string | null;
  match_key: string | null;
  /** The trigger item that resumed it (JSON). */
  item: string | null;
  created_at: string;
  expires_at: string;
  resumed_at: string | null;
  /** An event wait: requests of `workflow_id` accepted from this time on are still to be looked at. */
  look_from: string | null;
}

/** A test from captured traffic (SPEC 7g): JSON texts of the item, the mocks and the expectation. */
export interface WorkflowTestsTable {
  id: string;
  workflow_id: string;
  name: string;
  source_execution_id: string | null;
  item: string;
  mocks: string;
  expected: string;
  created_at: string;
  updated_at: string;
}

/** The data store (SPEC 7f; store/data-store.ts). */
export interface DataStoreTable {
  scope: 'global' | 'workflow';
  /** The workflow of a `workflow` entry; '' for `global`. */
  workflow_id: string;
  key: string;
  /** JSON of the value. */
  value: string;
  /** The value when it is a JSON number (what `increment` adds to), else null. */
  num: number | null;
  /** A fresh id per write: `setIfAbsent` tells whether its own write is the one stored. */
  token: string;
  /** ISO-8601; null: kept until deleted. An entry past it is gone (reads ignore it, the sweep deletes it). */
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A live schedule (SPEC 7f): the published schedule trigger of an active workflow. */
export interface SchedulesTable {
  workflow_id: string;
  /** The published version the ticks run. */
  version: number;
  cron: string;
  timezone: string;
  missed: 'runOnce' | 'skip';
  /** When this cron and zone went live (ISO): ticks before it are neither due nor missed. */
  since: string;
}

/** A tick that started an execution: the unique claim of (workflow, scheduled_at). */
export interface ScheduleTicksTable {
  workflow_id: string;
  scheduled_at: string;
  execution_id: string;
  fired_at: string;
}

export interface Database {
  data_store: DataStoreTable;
  schedules: SchedulesTable;
  schedule_ticks: ScheduleTicksTable;
  users: UsersTable;
  invitations: InvitationsTable;
  audit_log: AuditLogTable;
  idempotency_keys: IdempotencyKeysTable;
  rate_limits: RateLimitsTable;
  sessions: SessionsTable;
  setup_codes: SetupCodesTable;
  workflows: WorkflowsTable;
  workflow_versions: WorkflowVersionsTable;
  api_tokens: ApiTokensTable;
  executions: ExecutionsTable;
  concurrency_marks: ConcurrencyMarksTable;
  execution_fields: ExecutionFieldsTable;
  execution_checkpoints: ExecutionCheckpointsTable;
  test_listeners: TestListenersTable;
  test_events: TestEventsTable;
  learned_schemas: LearnedSchemasTable;
  blobs: BlobsTable;
  blob_parts: BlobPartsTable;
  credentials: CredentialsTable;
  oauth2_tokens: OAuth2TokensTable;
  oauth2_authorizations: OAuth2AuthorizationsTable;
  variables: VariablesTable;
  rejections: RejectionsTable;
  refusal_counts: RefusalCountsTable;
  trigger_alerts: TriggerAlertsTable;
  workflow_tests: WorkflowTestsTable;
  execution_waits: ExecutionWaitsTable;
}

export type WorkflowRow = Selectable<WorkflowsTable>;
export type NewWorkflowRow = Insertable<WorkflowsTable>;
export type WorkflowUpdate = Updateable<WorkflowsTable>;
export type ExecutionRow = Selectable<ExecutionsTable>;
export type NewExecutionRow = Insertable<ExecutionsTable>;
export type ExecutionFieldRow = Selectable<ExecutionFieldsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type TestEventRow = Selectable<TestEventsTable>;
export type TestListenerRow = Selectable<TestListenersTable>;
export type BlobRow = Selectable<BlobsTable>;
export type CredentialRow = Selectable<CredentialsTable>;
export type VariableRow = Selectable<VariablesTable>;
export type NewBlobRow = Insertable<BlobsTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
export type { Generated };
