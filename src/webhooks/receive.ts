/**
 * One pipeline for test and production webhook calls (SPEC 3):
 *   match → limits → auth → parse → persist → respond.
 * The HTTP layer turns a request into an InboundRequest and calls `match` as soon as the URL is
 * known (so 404/405/413 are answered before a body is read) and `accept` once the body is in.
 * Nothing here knows Fastify.
 */
import type { Logger } from 'pino';
import { SESSION_COOKIE } from '../accounts/accounts.js';
import { AppError } from '../errors.js';
import { isoString, newId } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import type { NewBlobRow } from '../store/schema.js';
import type { SecretBox } from '../security/secrets.js';
import { executionsRepo, isFinished, queuedExecution } from '../store/executions.js';
import type { Db, Store } from '../store/store.js';
import type { AuthConfig, Workflow } from '../workflows/model.js';
import { revealAuth } from '../workflows/trigger.js';
import { verifyAuth } from './auth/index.js';
import type { Ingest, IngestWrite } from './ingest.js';
import { type ParsedFile, parseBody, parseQuery } from './parse.js';
import { type Method, trimSlashes } from './path.js';
import type { Mode, TriggerRoute, Triggers } from './triggers.js';
import { notListening, type TestListeners } from './test-listener.js';
import { immediateOutcome, type Outcome, waitedOutcome } from './respond.js';
import type { ExecutionWaiter } from './waiter.js';
import { DEFAULT_WINDOW_SECONDS, idempotencyKey } from './options/idempotency.js';
import { ipAllowed } from './options/ip-allowlist.js';
import { MemoryRateLimiter, type RateLimiter, StoreRateLimiter } from './options/rate-limit.js';
import { diffAgainstSchema } from './schema/diff.js';
import type { JsonSchema, LearnedSchema } from './schema/json-schema.js';

export interface InboundRequest {
  method: string;
  /** The part after `/webhook/` or `/webhook-test/`, as received (no query string). */
  path: string;
  /** The query string without `?` ('' when none). */
  rawQuery: string;
  /** Node's lower-cased header map. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  ip: string;
  receivedAt: Date;
}

export interface Matched {
  mode: Mode;
  route: TriggerRoute;
  params: Record<string, string>;
  /** Largest body this trigger accepts. */
  maxBodyBytes: number;
}

export interface TriggerItem {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[]>;
  body: unknown;
  files: ItemFile[];
  webhookUrl: string;
  executionMode: Mode;
  receivedAt: string;
  auth?: { claims: Record<string, unknown> };
}

export interface ItemFile {
  id: string;
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  sha256: string;
}

const MASK = '***';

export interface ReceiverDeps {
  triggers: Triggers;
  ingest: Ingest;
  listeners: TestListeners;
  waiter: ExecutionWaiter;
  bus: Bus;
  log: Logger;
  store: Store;
  secrets: SecretBox;
  baseUrl: string;
  maxBodyBytes: number;
}

export class Receiver {
  readonly #d: ReceiverDeps;
  readonly #rate: RateLimiter;
  /** Learned schema per workflow for schemaCheck (null: none yet); dropped on every capture. */
  readonly #schemas = new Map<string, LearnedSchema | null>();
  /**
   * Revealed auth per workflow version (a saved change is a new Workflow object): decrypting on
   * every request would be wasted work.
   */
  readonly #auth = new WeakMap<Workflow, AuthConfig>();

  constructor(deps: ReceiverDeps) {
    this.#d = deps;
    // One process counts in memory; processes sharing the store count in it (one limit for all).
    this.#rate = deps.store.caps.shared ? new StoreRateLimiter(deps.store.db) : new MemoryRateLimiter();
    deps.bus.subscribe('test.captured', ({ workflowId }) => {
      this.#schemas.delete(workflowId);
    });
  }

  /** Find the trigger for a URL and method, or throw the SPEC's 404/405. */
  match(mode: Mode, method: string, path: string): Matched {
    const result = this.#d.triggers.registry(mode).match(method, path);
    if (result.kind === 'method_not_allowed') {
      throw new AppError('method_not_allowed', `This webhook does not accept ${method} requests.`, {
        hint: `Send one of: ${result.allow.join(', ')}; or add ${method} to the trigger's methods.`,
        headers: { allow: result.allow.join(', ') },
      });
    }
    if (result.kind === 'found') {
      const listener = result.entry.value.listener;
      if (mode === 'test' && listener && listener.expiresAt <= Date.now()) throw notListening();
      const own = result.entry.value.workflow.trigger.options.maxBodyBytes;
      return {
        mode,
        route: result.entry.value,
        params: result.params,
        maxBodyBytes: own === undefined ? this.#d.maxBodyBytes : Math.min(own, this.#d.maxBodyBytes),
      };
    }
    if (mode === 'test') throw notListening();
    // An expired listener stays in the test registry until its workflow is reloaded: it is not listening.
    const test = this.#d.triggers.test.match(method, path);
    const listening = test.kind === 'found' && (test.entry.value.listener?.expiresAt ?? 0) > Date.now();
    throw new AppError(
      'webhook_not_registered',
      `No active workflow is listening on ${method} /webhook/${trimSlashes(path)}.`,
      {
        hint: listening
          ? 'The workflow is not activated, but its test URL is listening: call /webhook-test/… while setting up, or activate the workflow to use this production URL.'
          : 'Activate the workflow to use its production URL; while setting it up, click "Listen for test event" and call the /webhook-test/… URL instead.',
      },
    );
  }

  #revealedAuth(workflow: Workflow): AuthConfig {
    let auth = this.#auth.get(workflow);
    if (!auth) {
      auth = revealAuth(workflow.trigger.auth, this.#d.secrets);
      this.#auth.set(workflow, auth);
    }
    return auth;
  }

  /** Refuse a declared body size over the trigger's limit before reading it. */
  checkDeclaredLength(matched: Matched, contentLength: string | undefined): void {
    if (contentLength !== undefined && Number(contentLength) > matched.maxBodyBytes)
      throw tooLarge(matched.maxBodyBytes);
  }

  /** Checks that need only the caller's address: before the body is read. */
  checkCaller(matched: Matched, ip: string): void {
    const allowlist = matched.route.workflow.trigger.options.ipAllowlist;
    if (allowlist && allowlist.length > 0 && !ipAllowed(allowlist, ip)) {
      throw new AppError('ip_not_allowed', `Calls from ${ip} are not allowed on this webhook.`, {
        hint: "Call from an address in the trigger's ipAllowlist, or add this one to it.",
      });
    }
  }

  async accept(matched: Matched, req: InboundRequest): Promise<Outcome> {
    if (req.body.length > matched.maxBodyBytes) throw tooLarge(matched.maxBodyBytes);
    const { workflow, listener } = matched.route;
    const trigger = workflow.trigger;
    const options = trigger.options;
    const auth = await verifyAuth(this.#revealedAuth(workflow), {
      headers: req.headers,
      rawBody: req.body,
      now: req.receivedAt.getTime(),
    });
    if (options.rateLimit) {
      const { requests, perSeconds } = options.rateLimit;
      const wait = await this.#rate.take(`${matched.mode}:${workflow.id}`, requests, perSeconds);
      if (wait > 0) {
        throw new AppError(
          'rate_limited',
          `This webhook accepts at most ${requests} calls per ${perSeconds} s.`,
          {
            hint: 'Retry after the number of seconds in Retry-After.',
            headers: { 'retry-after': String(wait) },
          },
        );
      }
    }

    const bodyless = req.method === 'GET' || req.method === 'HEAD';
    const query = parseQuery(req.rawQuery);
    const parsed = bodyless
      ? { body: {}, files: [] as ParsedFile[] }
      : await parseBody(header(req, 'content-type'), req.body);

    const executionId = newId();
    const receivedAt = isoString(req.receivedAt);
    const blobs: NewBlobRow[] = parsed.files.map((f) => ({
      id: newId(),
      execution_id: executionId,
      sha256: f.sha256,
      size: f.size,
      mime_type: f.mimeType,
      filename: f.filename,
      data: f.data,
      created_at: receivedAt,
    }));
    const path = trimSlashes(req.path);
    const item: TriggerItem = {
      method: req.method,
      path,
      params: matched.params,
      query,
      headers: itemHeaders(req.headers, auth.maskedHeaders),
      body: parsed.body,
      files: parsed.files.map((f, i) => ({
        id: blobs[i]!.id,
        field: f.field,
        filename: f.filename,
        mimeType: f.mimeType,
        size: f.size,
        sha256: f.sha256,
      })),
      webhookUrl: `${this.#d.baseUrl}/${matched.mode === 'test' ? 'webhook-test' : 'webhook'}/${path}`,
      executionMode: matched.mode,
      receivedAt,
    };
    // Last, as before: the stored JSON keeps its key order. (No `...spread` of an empty object.)
    if (auth.claims) item.auth = { claims: auth.claims };

    // schemaCheck and idempotency guard live traffic; test calls are how a schema is learned.
    const production = matched.mode === 'production';
    // Not even called when off (most triggers): an await costs a turn of the microtask queue.
    const warnings =
      production && (options.schemaCheck ?? 'off') !== 'off' ? await this.#checkSchema(workflow, item) : [];
    const idempotency = production && options.idempotency ? options.idempotency : undefined;
    const key = idempotency ? await idempotencyKey(idempotency, item, executionId) : undefined;
    if (key !== undefined) {
      const earlier = await this.#earlierDelivery(workflow.id, key, receivedAt);
      if (earlier) return this.#replay(workflow, earlier);
    }

    // Serialised once: the same text goes into the execution and the test event.
    const itemJson = JSON.stringify(item);
    const testCapture = matched.mode === 'test' && listener ? listener : undefined;
    const eventId = testCapture ? newId() : '';

    // Wait for the execution's end only when the response depends on it; subscribe before
    // committing so a fast worker cannot finish unseen.
    const responseMode = trigger.response.mode;
    const finished =
      responseMode === 'immediately'
        ? undefined
        : this.#d.waiter.wait(executionId, trigger.response.timeoutMs ?? 30_000);

    // The request's writes besides its execution; a plain production call has none, and its
    // execution goes through the store's prepared insert alone.
    const write: IngestWrite | undefined =
      key !== undefined || blobs.length > 0 || testCapture
        ? async (trx) => {
            if (key !== undefined) {
              const earlier = await this.#earlierDelivery(workflow.id, key, receivedAt, trx);
              if (earlier) throw new DuplicateDelivery(earlier);
              await trx
                .deleteFrom('idempotency_keys')
                .where('workflow_id', '=', workflow.id)
                .where('key', '=', key)
                .execute();
              const windowMs = (idempotency?.windowSeconds ?? DEFAULT_WINDOW_SECONDS) * 1000;
              await trx
                .insertInto('idempotency_keys')
                .values({
                  workflow_id: workflow.id,
                  key,
                  execution_id: executionId,
                  expires_at: isoString(new Date(req.receivedAt.getTime() + windowMs)),
                })
                .execute();
            }
            if (blobs.length > 0) await this.#d.store.hot.insertBlobs(trx, blobs);
            if (testCapture) {
              await this.#d.listeners.capture(trx, {
                workflowId: workflow.id,
                listenerId: testCapture.id,
                keepListening: testCapture.keepListening,
                eventId,
                executionId,
                item,
                itemJson,
                receivedAt,
              });
            }
          }
        : undefined;

    try {
      await this.#d.ingest.commit({
        workflow,
        execution: queuedExecution({
          id: executionId,
          workflow_id: workflow.id,
          workflow_version: workflow.version,
          mode: matched.mode,
          trigger: itemJson,
          created_at: receivedAt,
          warnings: warnings.length > 0 ? JSON.stringify(warnings) : null,
        }),
        item,
        ...(write ? { write } : {}),
      });
    } catch (err) {
      finished?.cancel();
      if (err instanceof DuplicateDelivery) return this.#replay(workflow, err.executionId);
      // Another process committed the same key first (unique violation on PostgreSQL).
      const earlier =
        key !== undefined ? await this.#earlierDelivery(workflow.id, key, receivedAt) : undefined;
      if (earlier) return this.#replay(workflow, earlier);
      throw err;
    }

    if (matched.mode === 'test' && listener) {
      const notices: Promise<void>[] = [
        this.#d.bus.publish('test.captured', { workflowId: workflow.id, eventId }),
      ];
      if (!listener.keepListening)
        notices.push(this.#d.bus.publish('listener.changed', { workflowId: workflow.id }));
      await Promise.all(notices).catch((err) => this.#d.log.error({ err }, 'capture notice failed'));
    }

    const headers = { 'x-hookflow-execution-id': executionId };
    if (!finished || responseMode === 'immediately') return immediateOutcome(trigger, executionId, headers);
    return waitedOutcome(this.#d.store.db, await finished.promise, executionId, responseMode, headers);
  }

  /** schemaCheck: what differs from the learned schema; `reject` refuses, `warn` notes it. */
  async #checkSchema(workflow: Workflow, item: TriggerItem): Promise<string[]> {
    const mode = workflow.trigger.options.schemaCheck ?? 'off';
    if (mode === 'off') return [];
    let learned = this.#schemas.get(workflow.id);
    if (learned === undefined) {
      learned = (await this.#d.listeners.schema(workflow.id)) ?? null;
      if (this.#schemas.size >= 10_000) this.#schemas.clear();
      this.#schemas.set(workflow.id, learned);
    }
    // Nothing learned yet: nothing to compare with.
    if (!learned) return [];
    const differences = diffPayload(learned.jsonSchema, item);
    if (differences.length > 0 && mode === 'reject') {
      throw new AppError(
        'schema_mismatch',
        `The payload differs from the learned schema: ${differences.slice(0, 10).join('; ')}.`,
        {
          hint: 'Send the fields the workflow expects, or capture a test event with the new shape so the schema learns it.',
        },
      );
    }
    return differences;
  }

  async #earlierDelivery(
    workflowId: string,
    key: string,
    now: string,
    db: Db = this.#d.store.db,
  ): Promise<string | undefined> {
    const row = await db
      .selectFrom('idempotency_keys')
      .select('execution_id')
      .where('workflow_id', '=', workflowId)
      .where('key', '=', key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row?.execution_id;
  }

  /** Answer a repeated delivery like the first one: same execution, nothing new started. */
  async #replay(workflow: Workflow, executionId: string): Promise<Outcome> {
    const headers = { 'x-hookflow-execution-id': executionId, 'idempotent-replayed': 'true' };
    const { mode, timeoutMs } = workflow.trigger.response;
    if (mode === 'immediately') return immediateOutcome(workflow.trigger, executionId, headers);
    const waiting = this.#d.waiter.wait(executionId, timeoutMs ?? 30_000);
    const row = await executionsRepo.get(this.#d.store.db, executionId);
    if (row && isFinished(row.status)) {
      waiting.cancel();
      return waitedOutcome(this.#d.store.db, true, executionId, mode, headers);
    }
    return waitedOutcome(this.#d.store.db, await waiting.promise, executionId, mode, headers);
  }
}

/** Compare what a payload carries (body and query) with the learned schema of the same parts. */
function diffPayload(schema: JsonSchema, item: TriggerItem): string[] {
  const properties = schema.properties ?? {};
  const parts = ['body', 'query'].filter((p) => properties[p] !== undefined);
  const sub: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(parts.map((p) => [p, properties[p]!])),
    required: parts,
  };
  return diffAgainstSchema(sub, { body: item.body, query: item.query });
}

class DuplicateDelivery extends Error {
  constructor(readonly executionId: string) {
    super('duplicate delivery');
  }
}

export type { Method };

function header(req: InboundRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Headers as the item keeps them: credentials masked, hookflow's own session cookie dropped. */
function itemHeaders(
  headers: InboundRequest['headers'],
  masked: string[],
): Record<string, string | string[]> {
  // Most calls have nothing to hide: Node's own header object is kept as is (no copy).
  const cookie = headers.cookie;
  if (masked.length === 0 && !(typeof cookie === 'string' && cookie.includes(SESSION_COOKIE)))
    return headers as Record<string, string | string[]>;
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (masked.includes(name)) out[name] = MASK;
    else if (name === 'cookie' && typeof value === 'string' && value.includes(SESSION_COOKIE)) {
      const kept = value
        .split(';')
        .filter((c) => c.trim().split('=')[0] !== SESSION_COOKIE)
        .join(';')
        .trim();
      if (kept) out[name] = kept;
    } else out[name] = value;
  }
  return out;
}

/** 413 for a body over `limit` (Matched.maxBodyBytes); also the HTTP layer's answer while reading. */
export function tooLarge(limit: number): AppError {
  return new AppError(
    'payload_too_large',
    `The request body is larger than this webhook accepts (${limit} bytes).`,
    {
      hint: "Send a smaller body, or raise the trigger's options.maxBodyBytes (up to HOOKFLOW_MAX_BODY_BYTES).",
    },
  );
}
