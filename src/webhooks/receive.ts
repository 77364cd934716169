/**
 * One pipeline for test and production webhook calls (SPEC 3):
 *   match → limits → auth → parse → persist → respond.
 * The HTTP layer calls `match` and `checkBeforeBody` as soon as the URL and headers are known (so
 * 404/405/403/413 are answered before a body is read), and `accept` once the body is in.
 * Nothing here knows Fastify.
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { isoString, newId } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import type { SecretBox } from '../security/secrets.js';
import { searchFieldRows } from '../store/execution-search.js';
import { executionsRepo, isFinished, queuedExecution } from '../store/executions.js';
import type { Store } from '../store/store.js';
import type { AuthConfig, Workflow } from '../model/workflow.js';
import { revealAuth } from '../workflows/trigger.js';
import { authenticate } from './auth/index.js';
import type { Ingest, IngestWrite } from './ingest.js';
import { type ParsedFile, parse, parseQuery } from './parse/index.js';
import { isPromise } from '../shared/maybe-promise.js';
import { type Method, trimSlashes } from '../shared/path.js';
import { buildItem, header, type InboundRequest } from './item.js';
import type { Mode, TriggerRoute, Triggers } from './triggers.js';
import { notListening, type TestListeners } from './test-listener.js';
import { immediateOutcome, type Outcome, PendingOutcome, waitedOutcome } from './respond.js';
import type { ExecutionWaiter } from './waiter.js';
import {
  DEFAULT_WINDOW_SECONDS,
  DuplicateDelivery,
  earlierDelivery,
  idempotencyKey,
  takeKey,
} from './options/idempotency.js';
import { SchemaCheck } from './options/schema-check.js';
import { ipAllowed } from './options/ip-allowlist.js';
import { MemoryRateLimiter, type RateLimiter, StoreRateLimiter } from './options/rate-limit.js';

/**
 * What `accept` gives back once the call is committed: the answer, or (`lastStep`, `respondStep`)
 * the answer still to come from the execution.
 */
export type Accepted = Outcome | PendingOutcome;

export interface Matched {
  mode: Mode;
  route: TriggerRoute;
  params: Record<string, string>;
  /** Largest body this trigger accepts. */
  maxBodyBytes: number;
}

/** A call whose body has not been read yet. */
export type PendingCall = Pick<InboundRequest, 'method' | 'path' | 'ip' | 'headers'>;

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
  readonly #schemaCheck: SchemaCheck;
  /**
   * Revealed auth per workflow version (a saved change is a new Workflow object): decrypting on
   * every request would be wasted work.
   */
  readonly #auth = new WeakMap<Workflow, AuthConfig>();

  constructor(deps: ReceiverDeps) {
    this.#d = deps;
    // One process counts in memory; processes sharing the store count in it (one limit for all).
    this.#rate = deps.store.caps.shared ? new StoreRateLimiter(deps.store.db) : new MemoryRateLimiter();
    this.#schemaCheck = new SchemaCheck(deps.listeners, deps.bus);
  }

  /**
   * The trigger for a call's URL and method, or the SPEC's 404/405; a CORS preflight is matched
   * against the method it announces. Then `checkBeforeBody`, then (the HTTP layer having read at
   * most `maxBodyBytes`) `accept`.
   */
  match(mode: Mode, call: PendingCall): Matched {
    const method =
      call.method === 'OPTIONS'
        ? String(call.headers['access-control-request-method'] ?? 'OPTIONS').toUpperCase()
        : call.method;
    return this.#match(mode, method, call.path);
  }

  /** What can be refused before the body is read: the caller's address (403), the declared size (413). */
  checkBeforeBody(matched: Matched, call: PendingCall): void {
    this.#checkCaller(matched, call.ip);
    if (call.method !== 'OPTIONS')
      this.#checkDeclaredLength(matched, call.headers['content-length'] as string | undefined);
  }

  /** Find the trigger for a URL and method, or throw the SPEC's 404/405. */
  #match(mode: Mode, method: string, path: string): Matched {
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
  #checkDeclaredLength(matched: Matched, contentLength: string | undefined): void {
    if (contentLength !== undefined && Number(contentLength) > matched.maxBodyBytes)
      throw tooLarge(matched.maxBodyBytes);
  }

  /** Checks that need only the caller's address: before the body is read. */
  #checkCaller(matched: Matched, ip: string): void {
    const allowlist = matched.route.workflow.trigger.options.ipAllowlist;
    if (allowlist && allowlist.length > 0 && !ipAllowed(allowlist, ip)) {
      throw new AppError('ip_not_allowed', `Calls from ${ip} are not allowed on this webhook.`, {
        hint: "Call from an address in the trigger's ipAllowlist, or add this one to it.",
      });
    }
  }

  /** `commitNow`: the HTTP layer's word that this call's sender is the only one (IngestJob.commitNow). */
  async accept(matched: Matched, req: InboundRequest, commitNow: boolean): Promise<Accepted> {
    if (req.body.length > matched.maxBodyBytes) throw tooLarge(matched.maxBodyBytes);
    const { workflow, listener } = matched.route;
    const trigger = workflow.trigger;
    const options = trigger.options;
    // Awaited only when the verifier answers with a promise (an await costs a turn of the
    // microtask queue), as parsing below for every body but multipart.
    const verifying = authenticate(this.#revealedAuth(workflow), {
      headers: req.headers,
      rawBody: req.body,
      now: req.receivedAt.getTime(),
    });
    const auth = isPromise(verifying) ? await verifying : verifying;
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
    const parsing = bodyless
      ? { body: {}, files: [] as ParsedFile[] }
      : parse(header(req, 'content-type'), req.body);
    const parsed = isPromise(parsing) ? await parsing : parsing;
    const executionId = newId();
    const { item, blobs } = buildItem({
      mode: matched.mode,
      req,
      params: matched.params,
      query,
      parsed,
      auth,
      baseUrl: this.#d.baseUrl,
      executionId,
    });
    const receivedAt = item.receivedAt;

    // schemaCheck and idempotency guard live traffic; test calls are how a schema is learned.
    const production = matched.mode === 'production';
    // Not even called when off (most triggers): an await costs a turn of the microtask queue.
    const warnings =
      production && (options.schemaCheck ?? 'off') !== 'off'
        ? await this.#schemaCheck.check(workflow, item)
        : [];
    const idempotency = production && options.idempotency ? options.idempotency : undefined;
    const key = idempotency ? await idempotencyKey(idempotency, item, executionId) : undefined;
    if (key !== undefined) {
      const earlier = await earlierDelivery(this.#d.store.db, workflow.id, key, receivedAt);
      if (earlier) return this.#replay(workflow, earlier);
    }

    // Serialised once: the same text goes into the execution and the test event.
    const itemJson = JSON.stringify(item);
    const testCapture = matched.mode === 'test' && listener ? listener : undefined;
    const eventId = testCapture ? newId() : '';

    // Wait for the execution's end only when the response depends on it; subscribe before
    // committing so a fast worker cannot finish unseen. Past the waiter's cap this throws 503
    // `overloaded`, and nothing is committed: the caller may retry without sending anything twice
    // (after the commit, the honest answer would have been the 504 of a wait that never started).
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
              const windowMs = (idempotency?.windowSeconds ?? DEFAULT_WINDOW_SECONDS) * 1000;
              await takeKey(trx, {
                workflowId: workflow.id,
                key,
                executionId,
                now: receivedAt,
                expiresAt: isoString(new Date(req.receivedAt.getTime() + windowMs)),
              });
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

    const searchFields = workflow.settings?.searchFields;
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
        commitNow,
        ...(write ? { write } : {}),
        // Only workflows that declare searchable fields pay for them (issue 19).
        ...(searchFields
          ? { fields: searchFieldRows({ id: executionId, workflow_id: workflow.id }, searchFields, item) }
          : {}),
      });
    } catch (err) {
      finished?.cancel();
      if (err instanceof DuplicateDelivery) return this.#replay(workflow, err.executionId);
      // Another process committed the same key first (unique violation on PostgreSQL).
      const earlier =
        key !== undefined ? await earlierDelivery(this.#d.store.db, workflow.id, key, receivedAt) : undefined;
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
    return new PendingOutcome(this.#d.store.db, finished, executionId, responseMode, headers);
  }

  /** Answer a repeated delivery like the first one: same execution, nothing new started. */
  async #replay(workflow: Workflow, executionId: string): Promise<Accepted> {
    const headers = { 'x-hookflow-execution-id': executionId, 'idempotent-replayed': 'true' };
    const { mode, timeoutMs } = workflow.trigger.response;
    if (mode === 'immediately') return immediateOutcome(workflow.trigger, executionId, headers);
    const waiting = this.#d.waiter.wait(executionId, timeoutMs ?? 30_000);
    const row = await executionsRepo.get(this.#d.store.db, executionId);
    if (row && isFinished(row.status)) {
      waiting.cancel();
      return waitedOutcome(this.#d.store.db, true, executionId, mode, headers);
    }
    return new PendingOutcome(this.#d.store.db, waiting, executionId, mode, headers);
  }
}

export type { Method };

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
