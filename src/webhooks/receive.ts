/**
 * The webhook pipeline, one for test and production calls (SPEC 3), in the order `receive` runs it:
 *   match → limits → auth → parse → persist → respond.
 * The HTTP front (http/routes/webhooks.ts) hands over a WebhookCall as soon as the URL and headers
 * are known, with a BodySource to read the body from, so unknown paths, wrong methods, refused
 * callers and declared oversize bodies are answered before a byte of the body is read. It gets an
 * Answer back and writes it; every decision is made here. Nothing here knows HTTP frameworks.
 */
import type { Logger } from 'pino';
import { AppError, coerceError } from '../errors.js';
import { isoString, newId, nowIso } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import type { SecretBox } from '../security/secrets.js';
import { searchFieldRows } from '../store/execution-search.js';
import { executionsRepo, isFinished, queuedExecution, withConcurrency } from '../store/executions.js';
import { concurrencyOf } from '../engine/concurrency.js';
import type { Store } from '../store/store.js';
import { isStoreUnavailable, storeUnavailable } from '../store/unavailable.js';
import type { AuthConfig, WebhookWorkflow, Workflow } from '../model/workflow.js';
import { isPromise, type MaybePromise } from '../shared/maybe-promise.js';
import { trimSlashes } from '../shared/path.js';
import { revealAuth } from '../workflows/trigger.js';
import { authenticate } from './auth/index.js';
import { bodyLimit, checkDeclaredLength, checkLength } from './body-limits.js';
import { corsHeaders, preflightHeaders } from './cors.js';
import { signedHandshake, unsignedHandshake } from './handshake.js';
import type { Ingest, IngestWrite } from './ingest.js';
import { buildItem, header, type InboundRequest, type TriggerItem } from './item.js';
import type { NewBlobRow } from '../store/schema.js';
import { type ParsedBody, parse, parseQuery } from './parse/index.js';
import type { Mode, TriggerRoute, Triggers } from './triggers.js';
import { notListening, type TestListeners } from './test-listener.js';
import { immediateOutcome, type Outcome, PendingOutcome, waitedOutcome } from './respond.js';
import type { ExecutionWaiter } from './waiter.js';
import type { Waits } from '../executions/waits.js';
import {
  DEFAULT_WINDOW_SECONDS,
  DuplicateDelivery,
  earlierDelivery,
  idempotencyKey,
  takeKey,
} from './options/idempotency.js';
import { ipAllowed } from './options/ip-allowlist.js';
import { MemoryRateLimiter, type RateLimiter, StoreRateLimiter } from './options/rate-limit.js';
import type { Rejections } from './options/rejections.js';
import { SchemaCheck } from './options/schema-check.js';

/** The request body, not read yet: the HTTP front's reader. */
export interface BodySource {
  /**
   * The raw body, at most `limit` bytes: rejects with `tooLarge(limit)` (body-limits.ts) as soon as
   * more arrive, and with the reader's own refusals (a body that falls silent, one shorter than its
   * Content-Length, no room for another request in progress).
   */
  read(limit: number): Promise<Buffer>;
}

/** One webhook call as the HTTP front hands it over: all but the body is known. */
export interface WebhookCall extends Pick<InboundRequest, 'method' | 'path' | 'rawQuery' | 'ip' | 'headers'> {
  mode: Mode;
  body: BodySource;
  /**
   * The HTTP layer's word that this call's sender is the only one (http/lone-sender.ts): its
   * execution is then committed on the event loop at once (IngestJob.commitNow).
   */
  commitNow: boolean;
}

/**
 * What the HTTP front writes back, as it is. `headers` are the CORS headers (a preflight's all of
 * them; an outcome's own headers override them). `sandbox`: the Content-Security-Policy sandbox of
 * an outcome's body: hookflow's own fixed message, a page the workflow wrote, or none (the
 * trigger's `response.sandbox: false`).
 */
export type Answer =
  | { kind: 'preflight'; headers: Record<string, string> }
  | { kind: 'outcome'; headers: Record<string, string>; outcome: Outcome; sandbox: 'own' | 'page' | false }
  | { kind: 'refused'; headers: Record<string, string>; error: AppError };

/**
 * A committed call whose answer comes from its execution (`lastStep`, `respondStep`): `answer()`
 * once the execution finished, its respond step ran or the wait timed out; `abandon()` when the
 * caller went away (the execution goes on).
 */
export interface PendingAnswer {
  kind: 'pending';
  answer(): Promise<Answer>;
  abandon(): void;
}

/** The trigger a call's URL and method found. */
interface Matched {
  mode: Mode;
  route: TriggerRoute;
  params: Record<string, string>;
  /** Largest body this trigger accepts. */
  maxBodyBytes: number;
}

export interface ReceiverDeps {
  triggers: Triggers;
  ingest: Ingest;
  listeners: TestListeners;
  waiter: ExecutionWaiter;
  bus: Bus;
  log: Logger;
  store: Store;
  secrets: SecretBox;
  /** Where refused calls of a known trigger are kept (its rejections list). */
  rejections: Rejections;
  /** Waits for a call or an event (SPEC 7g): resume URLs, and requests matched to waiting runs. */
  waits: Waits;
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
   * One call, from its URL to its answer. Never rejects: a refusal is an Answer too (SPEC 3's error
   * body, with the trigger's CORS headers once it is known, and kept in its rejections list).
   */
  async receive(call: WebhookCall): Promise<Answer | PendingAnswer> {
    let matched: Matched | undefined;
    try {
      // match: the trigger for the URL and method (404, 405), then the caller's address (403).
      matched = this.#match(call);
      const { workflow } = matched.route;
      const trigger = workflow.trigger;
      this.#checkCaller(matched, call.ip);
      if (call.method === 'OPTIONS') {
        const requested = header(call, 'access-control-request-headers');
        return { kind: 'preflight', headers: preflightHeaders(trigger, header(call, 'origin'), requested) };
      }

      // limits: a declared oversize body is refused unread; the source stops reading past the limit.
      const limit = matched.maxBodyBytes;
      checkDeclaredLength(limit, call.headers['content-length']);
      const body = await call.body.read(limit);
      checkLength(body, limit);
      const req: InboundRequest = {
        method: call.method,
        path: call.path,
        rawQuery: call.rawQuery,
        headers: call.headers,
        body,
        ip: call.ip,
        receivedAt: new Date(),
      };

      // A provider's unsigned URL check (Meta, Microsoft Graph) is answered before the auth its
      // events must pass; a signed one (Slack, Zoom) once the auth passed and the body is parsed.
      if (trigger.handshake) {
        const handshake = unsignedHandshake(trigger, req, () => this.#handshakeToken(workflow));
        if (handshake) return this.#outcome(handshake, matched, call);
      }

      // auth (401), then the trigger's rate limit (429). Awaited only when the verifier answers
      // with a promise (an await costs a turn of the microtask queue), as parsing below for every
      // body but multipart.
      const authenticating = authenticate(this.#revealedAuth(workflow), {
        headers: req.headers,
        rawBody: body,
        now: req.receivedAt.getTime(),
      });
      const auth = isPromise(authenticating) ? await authenticating : authenticating;
      const rateLimit = trigger.options.rateLimit;
      if (rateLimit) {
        const wait = await this.#rate.take(
          `${matched.mode}:${workflow.id}`,
          rateLimit.requests,
          rateLimit.perSeconds,
        );
        if (wait > 0) throw rateLimited(rateLimit, wait);
      }

      // parse (400): the query and the body by its Content-Type, into the trigger item (SPEC 4).
      // GET and HEAD carry their data in the query: their body is `{}`.
      const query = parseQuery(req.rawQuery);
      const parsing: MaybePromise<ParsedBody> =
        req.method === 'GET' || req.method === 'HEAD'
          ? { body: {}, files: [] }
          : parse(header(req, 'content-type'), body);
      const parsed = isPromise(parsing) ? await parsing : parsing;
      if (trigger.handshake) {
        const handshake = signedHandshake(trigger, parsed.body, () => this.#handshakeToken(workflow));
        if (handshake) return this.#outcome(handshake, matched, call);
      }
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

      // persist, then respond.
      const accepted = await this.#persist(matched, {
        req,
        item,
        blobs,
        executionId,
        commitNow: call.commitNow,
      });
      return accepted instanceof PendingOutcome
        ? this.#pending(accepted, matched, call)
        : this.#outcome(accepted, matched, call);
    } catch (err) {
      return this.#refused(err, call, matched);
    }
  }

  /**
   * A call to a resume URL (SPEC 7g): `call.path` is `<executionId>/<token>`. Its body is read and
   * parsed as a webhook's (the server's body limit), into a trigger item the wait outputs; answered
   * 200 once the resume is committed (executions/waits.ts: 409 `already_resumed`, 404 `not_waiting`).
   */
  async resume(call: WebhookCall): Promise<Answer> {
    try {
      const [executionId, token, ...rest] = call.path.split('/');
      if (!executionId || !token || rest.length > 0) throw resumeNotFound();
      if (call.method === 'OPTIONS') return { kind: 'preflight', headers: {} };
      const limit = this.#d.maxBodyBytes;
      checkDeclaredLength(limit, call.headers['content-length']);
      const body = await call.body.read(limit);
      checkLength(body, limit);
      const req: InboundRequest = {
        method: call.method,
        path: executionId,
        rawQuery: call.rawQuery,
        headers: call.headers,
        body,
        ip: call.ip,
        receivedAt: new Date(),
      };
      const parsing: MaybePromise<ParsedBody> =
        req.method === 'GET' || req.method === 'HEAD'
          ? { body: {}, files: [] }
          : parse(header(req, 'content-type'), body);
      const parsed = isPromise(parsing) ? await parsing : parsing;
      const { item, blobs } = buildItem({
        mode: 'production',
        req,
        params: {},
        query: parseQuery(req.rawQuery),
        parsed,
        auth: { maskedHeaders: [] },
        baseUrl: this.#d.baseUrl,
        executionId,
      });
      // The URL it came to, without its token: the item is kept in the execution's record.
      item.webhookUrl = `${this.#d.baseUrl}/webhook-resume/${executionId}`;
      await this.#d.waits.resumeByCall(executionId, token, item, blobs);
      return {
        kind: 'outcome',
        headers: {},
        outcome: { status: 200, headers: {}, body: { message: 'Execution resumed' }, own: true },
        sandbox: 'own',
      };
    } catch (err) {
      const error =
        err instanceof AppError ? err : isStoreUnavailable(err) ? storeUnavailable(err) : coerceError(err);
      return { kind: 'refused', headers: {}, error };
    }
  }

  /**
   * The trigger for a call's URL and method, or the SPEC's 404/405; a CORS preflight is matched
   * against the method it announces.
   */
  #match(call: WebhookCall): Matched {
    const { mode, path } = call;
    const method =
      call.method === 'OPTIONS'
        ? (header(call, 'access-control-request-method') ?? 'OPTIONS').toUpperCase()
        : call.method;
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
      return {
        mode,
        route: result.entry.value,
        params: result.params,
        maxBodyBytes: bodyLimit(result.entry.value.workflow.trigger, this.#d.maxBodyBytes),
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

  /** The trigger's ipAllowlist (403): it needs only the caller's address, so it goes before the body. */
  #checkCaller(matched: Matched, ip: string): void {
    const allowlist = matched.route.workflow.trigger.options.ipAllowlist;
    if (allowlist && allowlist.length > 0 && !ipAllowed(allowlist, ip)) {
      throw new AppError('ip_not_allowed', `Calls from ${ip} are not allowed on this webhook.`, {
        hint: "Call from an address in the trigger's ipAllowlist, or add this one to it.",
      });
    }
  }

  #revealedAuth(workflow: WebhookWorkflow): AuthConfig {
    let auth = this.#auth.get(workflow);
    if (!auth) {
      auth = revealAuth(workflow.trigger.auth, this.#d.secrets);
      this.#auth.set(workflow, auth);
    }
    return auth;
  }

  /** The trigger's handshake token in clear, read only when a handshake needs it. */
  #handshakeToken(workflow: WebhookWorkflow): string | undefined {
    const sealed = workflow.trigger.handshakeToken;
    return sealed === undefined ? undefined : this.#d.secrets.reveal(this.#d.secrets.innermost(sealed));
  }

  /**
   * The schema check and the idempotency key (production only), then the commit: the execution,
   * queued, and the call's other writes in one transaction (ingest.ts). Resolves with the answer,
   * or (`lastStep`, `respondStep`) the answer still to come from the execution.
   */
  async #persist(
    matched: Matched,
    {
      req,
      item,
      blobs,
      executionId,
      commitNow,
    }: {
      req: InboundRequest;
      item: TriggerItem;
      blobs: NewBlobRow[];
      executionId: string;
      commitNow: boolean;
    },
  ): Promise<Outcome | PendingOutcome> {
    const { workflow, listener } = matched.route;
    const trigger = workflow.trigger;
    const options = trigger.options;
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

    // A run waits for this workflow's requests (SPEC 7g): they are matched in the transaction that
    // stores this one. An in-memory check: workflows nobody waits on pay nothing.
    const event =
      production && this.#d.waits.watching(workflow.id)
        ? this.#d.waits.eventWrite(workflow.id, item, itemJson)
        : undefined;

    // The request's writes besides its execution; a plain production call has none, and its
    // execution goes through the store's prepared insert alone.
    const write: IngestWrite | undefined =
      key !== undefined || blobs.length > 0 || testCapture || event
        ? async (trx) => {
            if (event) await event.write(trx);
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
    let execution = queuedExecution({
      id: executionId,
      workflow_id: workflow.id,
      workflow_version: workflow.version,
      mode: matched.mode,
      trigger: itemJson,
      created_at: receivedAt,
      warnings: warnings.length > 0 ? JSON.stringify(warnings) : null,
    });
    // The concurrency key (SPEC 7d) is evaluated here, at acceptance, and stored on the row: the
    // claim rule is then SQL over rows alone, the same on every process, and the execution keeps
    // its key through retries of its attempts, crashes and waits. Only workflows with the setting
    // pay for it.
    const concurrency = workflow.settings?.concurrency;
    if (concurrency) {
      const c = await concurrencyOf(concurrency, item, {
        id: executionId,
        mode: matched.mode,
        workflowId: workflow.id,
      });
      if (c) execution = withConcurrency(execution, c);
    }
    try {
      await this.#d.ingest.commit({
        workflow,
        execution,
        item,
        commitNow,
        ...(write ? { write } : {}),
        // Only workflows that declare searchable fields pay for them.
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

    if (event) await event.after();
    if (testCapture) {
      const notices: Promise<void>[] = [
        this.#d.bus.publish('test.captured', { workflowId: workflow.id, eventId }),
      ];
      if (!testCapture.keepListening)
        notices.push(this.#d.bus.publish('listener.changed', { workflowId: workflow.id }));
      await Promise.all(notices).catch((err) => this.#d.log.error({ err }, 'capture notice failed'));
    }

    const headers = { 'x-hookflow-execution-id': executionId };
    if (!finished || responseMode === 'immediately') return immediateOutcome(trigger, executionId, headers);
    return new PendingOutcome(this.#d.store.db, finished, executionId, responseMode, headers);
  }

  /** Answer a repeated delivery like the first one: same execution, nothing new started. */
  async #replay(workflow: WebhookWorkflow, executionId: string): Promise<Outcome | PendingOutcome> {
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

  /** respond: the outcome with the trigger's CORS headers and the sandbox its body gets. */
  #outcome(outcome: Outcome, matched: Matched, call: WebhookCall): Answer {
    const trigger = matched.route.workflow.trigger;
    return {
      kind: 'outcome',
      headers: corsHeaders(trigger, header(call, 'origin')),
      outcome,
      sandbox: trigger.response.sandbox === false ? false : outcome.own ? 'own' : 'page',
    };
  }

  /**
   * A method of its own, so that what `answer` and `abandon` hold is what they need: not the
   * request and its body, which `receive`'s frame held while it ran.
   */
  #pending(pending: PendingOutcome, matched: Matched, call: WebhookCall): PendingAnswer {
    return {
      kind: 'pending',
      answer: async () => {
        try {
          return this.#outcome(await pending.answer(), matched, call);
        } catch (err) {
          return this.#refused(err, call, matched);
        }
      },
      abandon: () => pending.abandon(),
    };
  }

  /**
   * A refusal as SPEC 3's error: AppErrors as they are, a store that cannot take the write as 503
   * `store_unavailable`, anything else as `internal_error` (its cause kept for the log). Refusals
   * of a known trigger carry its CORS headers, and the caller's (4xx) go to its rejections list.
   */
  #refused(err: unknown, call: WebhookCall, matched: Matched | undefined): Answer {
    const error =
      err instanceof AppError ? err : isStoreUnavailable(err) ? storeUnavailable(err) : coerceError(err);
    if (!matched) return { kind: 'refused', headers: {}, error };
    const workflow = matched.route.workflow;
    if (error.status < 500) {
      this.#d.rejections.record(workflow.id, {
        at: nowIso(),
        mode: call.mode,
        code: error.code,
        message: error.message,
        method: call.method,
        ip: call.ip,
      });
    }
    return { kind: 'refused', headers: corsHeaders(workflow.trigger, header(call, 'origin')), error };
  }
}

function resumeNotFound(): AppError {
  return new AppError('not_waiting', 'No execution waits for a call at this URL.', {
    hint: 'A resume URL is /webhook-resume/<executionId>/<token>, as $execution.resumeUrl gives it.',
  });
}

function rateLimited(
  { requests, perSeconds }: { requests: number; perSeconds: number },
  wait: number,
): AppError {
  return new AppError('rate_limited', `This webhook accepts at most ${requests} calls per ${perSeconds} s.`, {
    hint: 'Retry after the number of seconds in Retry-After.',
    headers: { 'retry-after': String(wait) },
  });
}
