/**
 * What the API sends and takes (SPEC 4, 8; src/model/, src/http/present.ts). Where the server has
 * the type, it is the server's (type-only imports, erased from the bundle), not a copy.
 */
import type { ExecutionError, ExecutionMode } from '../../src/model/execution';
import type { Workflow as SavedWorkflow } from '../../src/model/workflow';
import type { Method } from '../../src/shared/path';
import type { Role } from '../../src/shared/roles';
import type { MissedPolicy } from '../../src/shared/schedule';

export { METHODS, type Method } from '../../src/shared/path';
export type { Role } from '../../src/shared/roles';

export type AuthType = 'none' | 'basic' | 'header' | 'jwt' | 'hmac';

/** One shape for every auth kind; only the keys of `type` are sent (the server refuses others). */
export interface AuthConfig {
  type: AuthType;
  username?: string;
  password?: string;
  name?: string;
  value?: string;
  algorithm?: string;
  secret?: string;
  publicKey?: string;
  issuer?: string;
  audience?: string;
  preset?: string;
  header?: string;
  encoding?: string;
  prefix?: string;
  toleranceSeconds?: number;
}

export type ResponseMode = 'immediately' | 'lastStep' | 'respondStep';

export interface ResponseConfig {
  mode: ResponseMode;
  status?: number;
  body?: unknown;
  noContent?: boolean;
  timeoutMs?: number;
  /** false: answers go out without the CSP sandbox (pages served on purpose). */
  sandbox?: boolean;
}

export interface TriggerOptions {
  maxBodyBytes?: number;
  allowedOrigins?: string[];
  ipAllowlist?: string[];
  rateLimit?: { requests: number; perSeconds: number };
  idempotency?: { header?: string; key?: string; windowSeconds?: number };
  schemaCheck?: 'off' | 'warn' | 'reject';
}

export type Handshake = 'slack' | 'meta' | 'microsoft-graph' | 'zoom';

/**
 * A workflow's trigger as the API sends it: one object for both types (SPEC 7f). A webhook has
 * methods … productionUrl; a schedule has cron, timezone, missed and nextRunAt, and none of the
 * webhook's keys (readers of a schedule's trigger check `type` first).
 */
export interface Trigger {
  type: 'webhook' | 'schedule';
  /** Schedule: 5 or 6 fields (seconds first), or a nickname such as `@hourly`. */
  cron?: string;
  /** Schedule: an IANA time zone. */
  timezone?: string;
  missed?: MissedPolicy;
  /** Schedule: the next tick of the published schedule; null while inactive. */
  nextRunAt?: string | null;
  methods: Method[];
  path: string;
  auth: AuthConfig;
  response: ResponseConfig;
  options: TriggerOptions;
  /** A provider's URL check answered by hookflow (SPEC 7g). */
  handshake?: Handshake;
  /** Meta's verify token or Zoom's secret token: "***" once saved. */
  handshakeToken?: string;
  /** Trigger health alerts (SPEC 7g). */
  alerts?: {
    workflowId: string;
    silenceMinutes?: number;
    rejectionsPerMinute?: number;
    schemaDrift?: boolean;
  };
  testUrl: string;
  productionUrl: string;
}

export interface Step {
  name: string;
  type: string;
  [key: string]: unknown;
}

/** A workflow as the API sends it: the server's own (src/model/workflow.ts), its trigger with the URLs. */
export interface Workflow extends Omit<SavedWorkflow, 'trigger'> {
  trigger: Trigger;
}

/** `skipped`: superseded by a newer execution of its concurrency key (newest wins, SPEC 7d): no step ran. */
export type ExecutionStatus =
  | 'queued'
  | 'running'
  | 'waiting'
  | 'succeeded'
  | 'failed'
  | 'filtered'
  | 'skipped';
export type Mode = ExecutionMode;

export type { ExecutionError };

/** What an `http` step sent (its record's `request`): the body as text, or a file or multipart described. */
export interface SentRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  contentType?: string;
  body?: unknown;
  bodyTruncated?: boolean;
}

export interface ExecutionStep {
  name: string;
  type: string;
  /** `waiting`: the step parked the execution (a `wait`, an `http` retry pause) or holds one that did. */
  status: 'succeeded' | 'failed' | 'filtered' | 'waiting';
  input?: unknown;
  output: unknown;
  error: ExecutionError | null;
  startedAt: string;
  finishedAt: string;
  /** `if`/`switch` (SPEC 7b): the branch that ran; absent when none did. */
  branch?: 'then' | 'else' | 'default' | number;
  /** `if`/`switch`: the records of the steps that ran inside. */
  steps?: ExecutionStep[];
  /** `forEach`: the first 100 iterations in full. */
  iterations?: {
    index: number;
    status: 'succeeded' | 'filtered' | 'failed' | 'waiting';
    steps: ExecutionStep[];
  }[];
  /** `forEach`: how many elements there were. */
  iterationCount?: number;
  /** `code`: its console.log lines (first 100). */
  logs?: string[];
  /** `http`: the request as sent (secrets as "***"). */
  request?: SentRequest;
  /** `http` with `retry` (SPEC 7c): each attempt. */
  attempts?: { at: string; status?: number; error?: string }[];
  /** `workflow`: the sub-workflow execution it started. */
  childExecutionId?: string;
  /** `email` (SPEC 7e): the message as sent (addresses, subject, attachments) and the server's last reply. */
  mail?: {
    from?: string;
    to?: string[];
    cc?: string[];
    bcc?: string[];
    replyTo?: string[];
    subject?: string;
    attachments?: { filename: string; mimeType: string; size: number }[];
    reply?: string;
  };
  /** `email`: the recipients the server refused, each with its reply. */
  refused?: { recipient: string; reply: string }[];
}

export interface Execution {
  id: string;
  workflowId: string;
  workflowVersion: number;
  mode: Mode;
  status: ExecutionStatus;
  trigger: TriggerItem;
  steps: ExecutionStep[];
  error: ExecutionError | null;
  attempt: number;
  retryOf: string | null;
  /** GET /executions/{id} only: the executions that retry this one, oldest first. */
  retries?: string[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** settings.concurrency.key as evaluated when it was accepted (SPEC 7d); null: none. */
  concurrencyKey?: string | null;
  /** Why a `skipped` execution ran no step: `superseded` (newest wins). */
  skipReason?: 'superseded' | null;
  /** The error workflow's execution this failed production execution started (SPEC 7c). */
  errorExecutionId?: string | null;
  /** A sub-workflow execution (mode `sub`): the execution whose `workflow` step started it. */
  parentExecutionId?: string | null;
  /** While `waiting`: when it resumes (ISO-8601 UTC); null otherwise. */
  resumeAt?: string | null;
  /** GET /executions/:id, while `waiting`: the call or event its `wait` step waits for (SPEC 7g). */
  waitingFor?: WaitingFor | null;
}

/** What a waiting execution waits for (SPEC 7g): a call to its resume URL, or another workflow's request by key. */
export type WaitingFor =
  | { for: 'call'; step: string; expiresAt: string; resumeUrl: string }
  | { for: 'event'; step: string; expiresAt: string; workflowId: string; key: string };

export interface TriggerItem {
  method?: string;
  path?: string;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  body?: unknown;
  files?: unknown[];
  webhookUrl?: string;
  executionMode?: Mode;
  receivedAt?: string;
  [key: string]: unknown;
}

export interface TestEvent {
  id: string;
  executionId: string | null;
  receivedAt: string;
  item: TriggerItem;
}

export interface Listener {
  listenerId: string;
  expiresAt: string;
  testUrl: string;
  keepListening: boolean;
}

/** The learned schema of test captures: the server's own types (src/webhooks/schema/json-schema.ts), not copies. */
export type { JsonSchema, LearnedField, LearnedSchema } from '../../src/webhooks/schema/json-schema';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface User {
  id: string;
  email: string;
  role: Role;
}

export interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}

export interface AuthStatus {
  setupRequired: boolean;
  user: User | null;
  csrfToken: string | null;
}
