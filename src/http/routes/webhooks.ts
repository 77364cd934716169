/**
 * The webhook URLs: `/webhook/*` (production), `/webhook-test/*` (test) and `/webhook-resume/*`
 * (an execution's resume URL, SPEC 7g). An adapter, nothing
 * more: it turns a node:http request into the pipeline's WebhookCall (webhooks/receive.ts), with
 * the request stream as its BodySource, and writes the pipeline's Answer back. Every decision about
 * the call (which trigger, its limits, auth, parsing, CORS, what to answer) is the pipeline's.
 *
 * A plain node:http handler in front of Fastify (server.ts hands it every request first), not a
 * Fastify route: this is the one path that must be fast, and a Fastify route cost ~15 µs a request
 * here (routing, the hook chain, the content-type parser, a pino child logger per request, reply
 * serialisation) of the ~80 µs a whole accepted request took at 11 000 req/s. What Fastify did for
 * it is done here the same way: request ids, the cap on requests in progress, 503 while closing,
 * trusted proxies (client-ip.ts), reading the body up to a limit, SPEC error bodies, metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../errors.js';
import { RESUME_PREFIX } from '../../engine/resume-url.js';
import { tooLarge } from '../../webhooks/body-limits.js';
import type { Answer, BodySource, PendingAnswer } from '../../webhooks/receive.js';
import type { Outcome } from '../../webhooks/respond.js';
import type { Mode } from '../../webhooks/triggers.js';
import { clientIp } from '../client-ip.js';
import type { HttpDeps } from '../deps.js';
import { toAppError } from '../error-handler.js';
import { LoneSender } from '../lone-sender.js';
import { bodyTimedOut } from '../request-timeouts.js';

/**
 * A cap on requests in progress (server.ts makes one for webhook calls and one for the Fastify app).
 */
export interface RequestGate {
  /** The caller's X-Request-Id when it is short and plain, else a new one. */
  requestId(given: string | string[] | undefined): string;
  /** The error to answer at once when the server is shutting down (nothing to leave then). */
  closing(): AppError | undefined;
  /** Count a request in progress until `res` closes; the error to answer instead, if any. */
  enter(res: ServerResponse): AppError | undefined;
  /**
   * Count a request in progress until `leave()`, for a caller that knows when it is done with it
   * (no 'close' listener); the error to answer instead, if any (then there is nothing to leave).
   */
  admit(): AppError | undefined;
  leave(): void;
}

/** Serves the request and returns true when it is a webhook call; false leaves it to Fastify. */
export type WebhookHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
const PRODUCTION = '/webhook/';
const TEST = '/webhook-test/';
const EMPTY = Buffer.alloc(0);
const JSON_TYPE = 'application/json; charset=utf-8';

export function webhookHandler(
  { receiver, config, metrics, log, health }: HttpDeps,
  gate: RequestGate,
): WebhookHandler {
  const ipOf = clientIp(config.http.trustProxy);
  const bodyTimeoutMs = config.http.bodyTimeoutMs;
  // Whether one sender is all there is: told every request's connection, asked for each one's commitNow.
  const lone = new LoneSender();

  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    mode: Mode,
    prefix: number,
    commitNow: boolean,
    resume: boolean,
  ): Promise<void> {
    // Set with the answer's other headers (writeHead alone is Node's fast case).
    const requestId = gate.requestId(req.headers['x-request-id']);
    const body = new RequestBody(req, gate, bodyTimeoutMs);
    let answer: Answer | PendingAnswer | undefined;
    try {
      const closing = gate.closing();
      if (closing) answer = { kind: 'refused', headers: {}, error: closing };
      else {
        const url = req.url!;
        const q = url.indexOf('?');
        const call = {
          mode,
          method: req.method!,
          path: url.slice(prefix, q === -1 ? undefined : q),
          rawQuery: q === -1 ? '' : url.slice(q + 1),
          ip: ipOf(req),
          headers: req.headers,
          body,
          commitNow,
        };
        answer = await (resume ? receiver.resume(call) : receiver.receive(call));
      }
      if (answer.kind === 'pending') {
        // Committed: what the place protects (reading, parsing, storing the request) is done. The
        // wait for the execution, up to its timeoutMs, holds a place of the waiter's own instead,
        // so callers parked on one slow workflow do not refuse new calls to every other webhook.
        body.leave();
        const pending = answer;
        // A caller that goes away stops waiting (its execution goes on).
        res.once('close', () => pending.abandon());
        answer = await pending.answer();
      }
      write(req, res, mode, requestId, answer);
    } catch (err) {
      // The pipeline answers its own refusals: what fails here is this file's work, such as writing
      // an answer whose header Node refuses. A 500, with the CORS headers of the answer it replaces.
      const headers = answer && answer.kind !== 'pending' ? answer.headers : {};
      write(req, res, mode, requestId, { kind: 'refused', headers, error: toAppError(err) });
    } finally {
      // Every way out of serve() passes here, a client that went away before its answer included
      // (reading its body fails, or the answer is skipped), so the gate and the metric need no 'close'
      // and 'finish' listeners on the response: those two cost ~200 ns a request. The request stays
      // counted while its work goes on, even after its client has gone.
      body.leave();
      // Answers written to a connection still open, as the 'finish' listener counted them.
      if (res.headersSent && !res.destroyed) metrics.webhookAnswered(mode, res.statusCode);
    }
  }

  /** The pipeline's answer as the response. */
  function write(
    req: IncomingMessage,
    res: ServerResponse,
    mode: Mode,
    requestId: string,
    answer: Answer,
  ): void {
    // A copy: the CORS headers stay as they were for the 500 that follows if writing fails.
    const headers: Record<string, string> = { ...answer.headers, 'x-request-id': requestId };
    switch (answer.kind) {
      case 'preflight':
        res.writeHead(204, headers).end();
        return;
      case 'outcome':
        if (answer.outcome.handshake)
          metrics.webhookHandshakes.inc({ mode, provider: answer.outcome.handshake });
        sendOutcome(
          res,
          headers,
          answer.outcome,
          answer.sandbox === false ? false : answer.sandbox === 'own' ? SANDBOX_OWN : SANDBOX_PAGE,
        );
        return;
      case 'refused': {
        const { error } = answer;
        metrics.webhookRejections.inc({ mode, code: error.code });
        if (error.code === 'internal_error') {
          log.error({ err: error.cause ?? error, reqId: requestId }, 'webhook request failed');
        }
        // Logged once per outage by the store's health, not per request (group commit tells it too).
        else if (error.code === 'store_unavailable') health.failed(error);
        if (res.headersSent || res.destroyed) return;
        // Answered before the whole request arrived (refused before or while its body was read, or a
        // body that fell silent): without this, Node would drain the rest, however large, to keep the
        // connection alive (up to HOOKFLOW_REQUEST_TIMEOUT). Fastify does the same for its 413.
        if (!req.complete) headers.connection = 'close';
        if (error.headers) Object.assign(headers, error.headers);
        send(res, error.status, headers, JSON_TYPE, JSON.stringify(error));
        return;
      }
    }
  }

  return (req, res) => {
    const url = req.url ?? '';
    const prefix = url.startsWith(PRODUCTION)
      ? PRODUCTION
      : url.startsWith(TEST)
        ? TEST
        : url.startsWith(RESUME_PREFIX)
          ? RESUME_PREFIX
          : undefined;
    if (prefix === undefined || !METHODS.has(req.method ?? '')) return false;
    lone.saw(req.socket);
    void serve(
      req,
      res,
      prefix === TEST ? 'test' : 'production',
      prefix.length,
      lone.now,
      prefix === RESUME_PREFIX,
    );
    return true;
  };
}

/**
 * The request stream as the pipeline's BodySource, and the request's place among requests in
 * progress: taken once the body starts arriving (a client that sends headers and then nothing
 * holds no place, only its socket, until HOOKFLOW_BODY_TIMEOUT), given back by `leave`.
 */
class RequestBody implements BodySource {
  readonly #req: IncomingMessage;
  readonly #gate: RequestGate;
  readonly #idleMs: number;
  #admitted = false;

  constructor(req: IncomingMessage, gate: RequestGate, idleMs: number) {
    this.#req = req;
    this.#gate = gate;
    this.#idleMs = idleMs;
  }

  read(limit: number): Promise<Buffer> {
    return readBody(this.#req, limit, this.#idleMs, () => {
      const refused = this.#gate.admit();
      this.#admitted = refused === undefined;
      return refused;
    });
  }

  /** Give the place back, if it was taken and not given back yet. */
  leave(): void {
    if (this.#admitted) {
      this.#admitted = false;
      this.#gate.leave();
    }
  }
}

/**
 * The request body as bytes, with Fastify's rules: GET and HEAD bodies are not read; a request
 * with neither Content-Type nor a body framing has none; more than `limit` bytes (declared or
 * received) is 413 as soon as the limit is passed; fewer bytes than Content-Length announced (the
 * client gave up) is 400; no byte for `idleMs` is 408. `admit` takes the request's place in the gate
 * at once when there is no body, else with the first chunk (its refusal is the answer). With a
 * Content-Length the buffer is allocated once at its size, when the first chunk is in: no chunk list
 * and no copy into a second buffer, so a 16 MiB upload is held once while it is read.
 */
function readBody(
  req: IncomingMessage,
  limit: number,
  idleMs: number,
  admit: () => AppError | undefined,
): Promise<Buffer> {
  const h = req.headers;
  if (
    req.method === 'GET' ||
    req.method === 'HEAD' ||
    (h['content-type'] === undefined &&
      h['transfer-encoding'] === undefined &&
      (h['content-length'] === undefined || h['content-length'] === '0'))
  ) {
    const refused = admit();
    return refused ? Promise.reject(refused) : Promise.resolve(EMPTY);
  }
  const declared = h['content-length'] === undefined ? Number.NaN : Number(h['content-length']);
  // A declared length over `limit` was refused before (the pipeline's limits step, GET included).
  return new Promise<Buffer>((ok, fail) => {
    // The listeners stay on the request (see done): what they reach is let go once settled, or the
    // promise and its body would stay alive with the request while its caller waits for the
    // execution (lastStep, respondStep).
    let resolve: typeof ok | undefined = ok;
    let reject: typeof fail | undefined = fail;
    const sized = Number.isInteger(declared) && declared >= 0;
    let whole: Buffer | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let started = false;
    // Refreshed by every chunk (timer.refresh() re-arms it in place, no new timer per chunk).
    // Unref'd, as Node's own HTTP timers are: Node keeps the list of unref'd timers of one duration
    // when its last timer is cleared, and deletes a ref'd one (a dictionary delete, a priority queue
    // removal, and a new list for the next request: ~600 against ~200 ns for a timer set and
    // cleared, as every webhook request does). The socket keeps the process alive meanwhile.
    const idle = setTimeout(() => done(bodyTimedOut(idleMs)), idleMs);
    idle.unref();
    const done = (err: Error | undefined, body?: Buffer) => {
      clearTimeout(idle);
      if (err) {
        // Refused midway: what else arrives is not ours. (After 'end' nothing more does: the
        // listeners go with the request, and removing them cost ~0.3 µs a request.)
        req.removeListener('data', onData);
        req.removeListener('end', onEnd);
        req.removeListener('error', onEnd);
        reject?.(err);
      } else {
        resolve?.(body!);
        whole = undefined;
        chunks.length = 0;
      }
      resolve = reject = undefined;
    };
    const onData = (chunk: Buffer) => {
      if (!started) {
        started = true;
        const refused = admit();
        if (refused) return done(refused);
        if (sized) whole = Buffer.allocUnsafe(declared);
      }
      idle.refresh();
      if (received + chunk.length > limit || (whole && received + chunk.length > whole.length)) {
        received += chunk.length;
        return done(received > limit ? tooLarge(limit) : invalidLength());
      }
      if (whole) chunk.copy(whole, received);
      else chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = (err?: Error) => {
      if (err)
        return done(new AppError('invalid_body', 'The request body could not be read.', { cause: err }));
      // A zero-length chunked body ends without a chunk: it still takes (and later leaves) a place.
      if (!started) {
        started = true;
        const refused = admit();
        if (refused) return done(refused);
      }
      if (sized && received !== declared) return done(invalidLength());
      done(undefined, whole ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onEnd);
  });
}

function invalidLength(): AppError {
  return new AppError('invalid_body', 'The request body does not match its Content-Length.', {
    hint: 'Check the Content-Length and Transfer-Encoding headers.',
  });
}

/**
 * `headers`: the CORS and request id headers, which the outcome's own override, whatever their case.
 * `sandbox`: the answer's policy; false when the trigger opted out (`response.sandbox: false`).
 */
function sendOutcome(
  res: ServerResponse,
  headers: Record<string, string>,
  outcome: Outcome,
  sandbox: string | false,
): void {
  for (const name in outcome.headers) {
    const lower = name.toLowerCase();
    if (lower !== name) delete headers[lower];
    headers[name] = outcome.headers[name]!;
  }
  const { body } = outcome;
  if (body === undefined || outcome.status === 204) {
    res.writeHead(outcome.status, headers).end();
    return;
  }
  // A respond step may set its own Content-Type, in any case.
  const given = contentType(headers);
  const type = given === undefined ? undefined : headers[given];
  if (given !== undefined) delete headers[given];
  const [fallback, bytes] = Buffer.isBuffer(body)
    ? ['application/octet-stream', body]
    : typeof body === 'string'
      ? ['text/plain; charset=utf-8', body]
      : [JSON_TYPE, JSON.stringify(body)];
  send(res, outcome.status, headers, type ?? fallback, bytes, sandbox);
}

/** The key of a Content-Type header in `headers`, whatever its case. */
function contentType(headers: Record<string, string>): string | undefined {
  for (const name in headers) if (name.toLowerCase() === 'content-type') return name;
  return undefined;
}

/**
 * The policy of a webhook answer whose body the workflow wrote (unless its trigger opted out): a
 * page a respond step builds from request data runs in an opaque origin, not the UI's, so its script
 * cannot read the session's CSRF token or call the API. n8n's (packages/core/src/html-sandbox.ts)
 * without its `allow-top-navigation` (only after a click here) and, above all, without
 * `allow-same-origin`.
 */
const SANDBOX_PAGE =
  'sandbox allow-downloads allow-forms allow-modals allow-orientation-lock allow-pointer-lock ' +
  'allow-popups allow-presentation allow-scripts allow-top-navigation-by-user-activation';

/**
 * The policy of hookflow's own answers (`Workflow was started`, errors): nothing there needs a
 * script, a form or a popup, so nothing is allowed. Also 190 bytes fewer on every such answer,
 * which under load costs more than it seems: every byte is written, delivered and read by the
 * caller (bench/obligations.js; docs/performance.md).
 */
const SANDBOX_OWN = 'sandbox';

/** `nosniff` always: a browser must not read a JSON or text answer as HTML. */
function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  type: string,
  body: string | Buffer,
  sandbox: string | false = SANDBOX_OWN,
): void {
  headers['content-type'] = type;
  headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  headers['x-content-type-options'] = 'nosniff';
  if (sandbox) {
    // A respond step's own policy (its header names are lower-cased) becomes a second policy of the
    // list (CSP3: comma-separated); browsers enforce each, so neither can loosen the other.
    const own = headers['content-security-policy'];
    headers['content-security-policy'] = own ? `${sandbox}, ${own}` : sandbox;
  }
  res.writeHead(status, headers).end(body);
}
