/**
 * `http`: an outbound request (undici). Output `{status, headers, body}`: the body is parsed JSON
 * when the response says JSON, text for text-like types, base64 (with `bodyEncoding: "base64"`)
 * otherwise. Like n8n, a non-2xx answer fails the step unless `failOnError: false` (then it is
 * data for the next steps); the response is recorded on the failed step either way.
 *
 * Limits: `timeoutMs` (default 30 s) covers one attempt's whole exchange including redirects; the
 * body is capped at 5 MiB (http/response.ts; an execution is stored whole, so a bigger body would bloat every later
 * step's record); up to 5 redirects are followed, each hop checked against the network policy again.
 *
 * Credentials (SPEC 7c): `"credential": "<id>"` applies one of the run's credentials (handed in by
 * the executor, engine/credentials.ts) to the request; the record's `request` (method, URL,
 * headers, content type, body) shows its header or query value as "***", and its values, in every form credentials.ts looks for, are scrubbed from
 * everything the step records or outputs: a body stored as text or base64 as bytes before it is
 * decoded or encoded, a JSON body once parsed, headers and error messages.
 *
 * Retries (SPEC 7c): `retry: {attempts, backoffMs, on}` repeats the request on a network error, a
 * 429 or a 5xx (as `on` lists), after `backoffMs · 2^(n-1)` with jitter (half fixed, half random),
 * or after what `Retry-After` asks (capped at 1 hour). A pause under a second is taken here; a
 * longer one parks the execution (`waiting`, no executor slot held) and the step resumes with its
 * next attempt. Every attempt is recorded in the step record's `attempts`.
 *
 * Idempotency keys (SPEC 7d): a POST or PATCH sends `Idempotency-Key: <executionId>.<step
 * name>[.<forEach index>…]` (`idempotencyKeyOf`), the same on every attempt of the step within its
 * execution — backoff retries, parked ones, and a run again after a crash or a lapsed lease — so an
 * API that honours the header applies the call once. `idempotencyKey: false` sends none,
 * `{header}` sends it under another name; a header of that name set in `headers` wins (the user
 * said what to send). It is no secret: the record's `request.headers` shows it.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { MethodSchema } from '../../model/workflow.js';
import { RESERVED_RESPONSE_HEADERS } from '../../shared/response-headers.js';
import {
  type Applied,
  applyCredential,
  maskedHeaders,
  maskedUrl,
  type Scrubber,
  scrubber,
} from '../credentials.js';
import { FileTooLarge } from '../files.js';
import { type BodySource, encodeBody, multipartBody, recordedBody, text } from '../http/request-body.js';
import { type HttpOutput, readResponse, storeResponse } from '../http/response.js';
import { loadUndici, NetworkRefused } from '../network.js';
import { type Attempt, nextAttempt, RetrySchema, resumedAttempts, retryPolicy } from '../retry.js';
import {
  defineStep,
  Expr,
  HEADER_NAME,
  HeaderMap,
  type StepContext,
  type StepDetails,
  StepFailure,
  type StepOutcome,
} from './types.js';

const MAX_REDIRECTS = 5;
const DEFAULT_TIMEOUT_MS = 30_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const RETRY_ON = ['network', '429', '5xx'] as const;
/** The methods that send an idempotency key: the ones that create or change something and are not idempotent by HTTP's rules. */
const KEYED_METHODS = new Set(['POST', 'PATCH']);
const IDEMPOTENCY_HEADER = 'idempotency-key';
/**
 * Headers recorded as "***" whatever set them (a credential, or typed into the step the old way):
 * the record of the request must not become a new place where a key pasted into a step is shown.
 */
const SECRET_HEADER = /authorization|cookie|token|secret|password|passwd|api-?key|signature|session|auth/i;

export { MAX_RESPONSE_BYTES } from '../http/response.js';
export {
  type Attempt,
  MAX_RETRY_AFTER_MS,
  PARK_FROM_MS,
  pauseBefore,
  retryAfterMs,
} from '../retry.js';

/** The webhook's methods (model/workflow.ts), and OPTIONS. */
const Method = Type.Union([...MethodSchema.anyOf, Type.Literal('OPTIONS')]);

export const httpStep = defineStep({
  type: 'http',
  description: 'Send an HTTP request; its response is the output.',
  credentialTypes: ['bearer', 'header', 'basic', 'query', 'oauth2'],
  // A Slack incoming-webhook URL, an API key in a header or the query, a token in the body.
  secretFields: ['/url', '/headers', '/query', '/body'],
  config: Type.Object(
    {
      method: Type.Optional(Method),
      url: Type.String({ minLength: 1, maxLength: 8192 }),
      headers: Type.Optional(HeaderMap()),
      query: Type.Optional(
        Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), { maxProperties: 200 }),
      ),
      body: Type.Optional(Type.Unknown()),
      multipart: Type.Optional(
        Type.Object(
          {
            fields: Type.Optional(
              Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), { maxProperties: 200 }),
            ),
            files: Type.Optional(
              Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), { maxProperties: 100 }),
            ),
          },
          {
            additionalProperties: false,
            description:
              'A multipart/form-data body: `fields` (name → value) and `files` (name → a file reference, or a list of them), streamed from the store.',
          },
        ),
      ),
      responseType: Type.Optional(
        Type.Union([Type.Literal('auto'), Type.Literal('file')], {
          description:
            '"file": a 2xx response body is stored as a file, and the output is {status, headers, file} (a file reference); "auto" (default): parsed by its content type.',
        }),
      ),
      timeoutMs: Type.Optional(Expr(Type.Integer({ minimum: 1, maximum: 300_000 }))),
      failOnError: Type.Optional(Expr(Type.Boolean())),
      credential: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 64,
          pattern: '^[0-9A-Za-z_-]+$',
          description: 'The id of a credential (POST /api/v1/credentials), applied at run time.',
        }),
      ),
      retry: Type.Optional(RetrySchema(RETRY_ON)),
      idempotencyKey: Type.Optional(
        Type.Union(
          [
            Type.Boolean(),
            Type.Object(
              { header: Type.String({ minLength: 1, maxLength: 256, pattern: HEADER_NAME.source }) },
              { additionalProperties: false },
            ),
          ],
          {
            description:
              'POST and PATCH send `Idempotency-Key: <executionId>.<step name>[.<forEach index>…]` (default true); false sends none; {header} renames it.',
          },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  check(config) {
    const errors: FieldError[] = [];
    if (config.body !== undefined && config.multipart !== undefined)
      errors.push({ field: '/multipart', message: 'cannot be set with body: a request has one body' });
    const key = config.idempotencyKey;
    const name = typeof key === 'object' ? key.header.toLowerCase() : undefined;
    if (name !== undefined && (RESERVED_RESPONSE_HEADERS.has(name) || name === 'host'))
      errors.push({
        field: '/idempotencyKey/header',
        message: 'is a header the HTTP client sets itself and cannot carry the idempotency key',
      });
    return errors;
  },
  async run(config, ctx) {
    const method: string = config.method ?? 'GET';
    const url = parseUrl(config.url);
    for (const [key, value] of Object.entries(config.query ?? {})) {
      for (const v of Array.isArray(value) ? value : [value])
        if (v !== undefined && v !== null) url.searchParams.append(key, text(v));
    }
    const headers: Record<string, string> = { 'user-agent': 'hookflow' };
    for (const [name, value] of Object.entries(config.headers ?? {})) {
      if (value === undefined || value === null) continue;
      const v = text(value);
      if (/[\r\n\0]/.test(v))
        throw new StepFailure(`The value of header "${name}" contains a line break.`, {
          field: `/headers/${name}`,
        });
      headers[name.toLowerCase()] = v;
    }
    let applied: Applied | undefined;
    /** An `oauth2` credential's id and the access token sent (renewed once after a 401). */
    let oauth: { id: string; token: string; renewed: boolean } | undefined;
    if (config.credential !== undefined) {
      const cred = ctx.credentials?.[config.credential];
      if (!cred)
        throw new StepFailure(
          `Credential "${config.credential}" does not exist (any more): this version names a credential that was deleted.`,
          { field: '/credential' },
        );
      if (cred.type === 'oauth2') {
        const token = await accessToken(ctx, config.credential);
        oauth = { id: config.credential, token, renewed: false };
        applied = applyCredential({ type: 'oauth2', data: { token } }, url, headers);
      } else applied = applyCredential(cred, url, headers);
    }
    const keyHeader = idempotencyHeader(method, config.idempotencyKey);
    // A header of that name the step sets itself is sent as it is.
    if (keyHeader !== undefined && headers[keyHeader] === undefined) {
      const key = idempotencyKeyOf(ctx);
      if (key !== undefined) headers[keyHeader] = key;
    }
    const body =
      config.multipart !== undefined
        ? multipartBody(method, config.multipart, headers, ctx)
        : encodeBody(method, config.body, headers, ctx);
    // A credential's values and the run's secret variables (SPEC 7e), in every form.
    let scrub = scrubber([...(applied?.secrets ?? []), ...(ctx.secrets ?? [])]);
    // A secret variable put into the URL, a header (a Slack webhook URL is one) or the body is "***".
    const recorded = scrub.value({
      method,
      url: maskedUrl(url, applied),
      headers: Object.fromEntries(
        Object.entries(maskedHeaders(headers, applied)).map(([k, v]) => [
          k,
          SECRET_HEADER.test(k) ? '***' : v,
        ]),
      ),
      ...(headers['content-type'] !== undefined ? { contentType: headers['content-type'] } : {}),
      ...recordedBody(config, body),
    }) as Record<string, unknown>;
    const attempts: Attempt[] = resumedAttempts(ctx.resume?.state);
    const details = (): StepDetails => ({ request: recorded, attempts: [...attempts] });
    const policy = retryPolicy(config.retry, RETRY_ON);
    const maxAttempts = policy.attempts;
    const on = policy.on;
    const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const failOnError = config.failOnError ?? true;
    /** Attempts made again with a renewed OAuth2 token after a 401 (not counted against `retry`). */
    let renewals = 0;

    for (;;) {
      const at = new Date().toISOString();
      let outcome: { output: HttpOutput; method: string; url: URL } | undefined;
      let failure: StepFailure | undefined;
      let retryable = false;
      try {
        outcome = await send(
          ctx,
          method,
          new URL(url.href),
          { ...headers },
          body,
          timeoutMs,
          applied,
          scrub,
          config.responseType === 'file',
        );
        attempts.push({ at, status: outcome.output.status });
        const status = outcome.output.status;
        retryable = (status === 429 && on.has('429')) || (status >= 500 && status <= 599 && on.has('5xx'));
      } catch (err) {
        failure = err as StepFailure;
        attempts.push({ at, error: String(scrub.value(failure.message)) });
        retryable = failure instanceof NetworkFailure && on.has('network');
      }
      // An OAuth2 access token the API refuses (revoked, or expired early): once per step, the
      // same request again with a renewed token. Not one of `retry`'s attempts.
      if (outcome?.output.status === 401 && oauth && !oauth.renewed && !ctx.signal.aborted) {
        let token: string;
        try {
          token = await accessToken(ctx, oauth.id, oauth.token);
        } catch (err) {
          const e = err as StepFailure;
          throw new StepFailure(e.message, {
            ...(e.field ? { field: e.field } : {}),
            ...(e.code ? { code: e.code } : {}),
            output: scrub.value(outcome.output),
            details: details(),
          });
        }
        oauth = { id: oauth.id, token, renewed: true };
        // The refused token stays masked too (an answer may still quote it).
        const before = applied?.secrets ?? [];
        applied = applyCredential({ type: 'oauth2', data: { token } }, url, headers);
        applied.secrets.push(...before);
        scrub = scrubber([...applied.secrets, ...(ctx.secrets ?? [])]);
        renewals++;
        continue;
      }
      const done = attempts.length - renewals;
      if (retryable) {
        // A request made again with a renewed token is not one of `retry`'s attempts.
        const counted = renewals > 0 ? { ...policy, attempts: policy.attempts + renewals } : policy;
        const next = await nextAttempt(ctx, counted, attempts, outcome?.output.headers['retry-after']);
        if (next === 'again') continue;
        if (next) return { output: null, park: next.park, details: details() } satisfies StepOutcome;
      }
      if (failure) {
        throw new StepFailure(String(scrub.value(failure.message)), {
          ...(failure.field ? { field: failure.field } : {}),
          ...(failure.code ? { code: failure.code } : {}),
          ...(failure.output !== undefined ? { output: scrub.value(failure.output) } : {}),
          cause: failure,
          details: details(),
        });
      }
      const output = scrub.value(outcome!.output) as HttpOutput;
      if (failOnError && (output.status < 200 || output.status > 299)) {
        const tried = done > 1 ? ` (attempt ${done} of ${maxAttempts})` : '';
        throw new StepFailure(
          `${outcome!.method} ${redact(outcome!.url)} answered ${output.status}${tried}. Set failOnError: false to go on with non-2xx responses.`,
          { output, details: details() },
        );
      }
      return { output, details: details() };
    }
  },
});

/**
 * The access token of `oauth2` credential `id` (a new one when `rejected` is the token an API just
 * refused), from the executor. Fails the step when there is none: `credential_expired` when a
 * person must connect the credential again.
 */
async function accessToken(ctx: StepContext, id: string, rejected?: string): Promise<string> {
  if (!ctx.tokens)
    throw new StepFailure(
      `Credential "${id}" is an OAuth2 credential, and this run has no way to get its tokens.`,
      {
        field: '/credential',
      },
    );
  const result = await ctx.tokens.accessToken(id, rejected);
  if ('token' in result) return result.token;
  throw new StepFailure(result.error, {
    field: '/credential',
    ...(result.code ? { code: result.code } : {}),
  });
}

/** The header (lower case) a request of `method` carries its idempotency key in, or undefined when none. */
function idempotencyHeader(
  method: string,
  option: boolean | { header: string } | undefined,
): string | undefined {
  if (!KEYED_METHODS.has(method) || option === false) return undefined;
  return typeof option === 'object' ? option.header.toLowerCase() : IDEMPOTENCY_HEADER;
}

/**
 * `<executionId>.<step name>[.<forEach index>…]`: what names this call within its execution, and
 * only it (step names are unique in a workflow), the same on every attempt and resumption.
 * Characters a header value cannot carry as they are (control characters, non-ASCII) and `%`
 * itself are percent-encoded (UTF-8), so every name gives a distinct, sendable key. Undefined
 * when the engine did not say where the step runs.
 */
export function idempotencyKeyOf(ctx: Pick<StepContext, 'scope' | 'step' | 'indices'>): string | undefined {
  const executionId = ctx.scope?.execution.id;
  if (executionId === undefined || ctx.step === undefined) return undefined;
  const name = ctx.step.replace(/[^\x20-\x24\x26-\x7e]+/gu, percentEncoded);
  const key = `${executionId}.${name}`;
  return ctx.indices && ctx.indices.length > 0 ? `${key}.${ctx.indices.join('.')}` : key;
}

/** `s` as UTF-8 bytes, each as `%XX` (a lone surrogate becomes U+FFFD's bytes rather than throwing). */
function percentEncoded(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** A request that failed on the way (connection refused or reset, DNS, timeout): what `on: ["network"]` retries. */
class NetworkFailure extends StepFailure {}

/** One attempt: the request and its redirects. Throws StepFailure (NetworkFailure when retryable). */
async function send(
  ctx: StepContext,
  method: string,
  startUrl: URL,
  headers: Record<string, string>,
  firstBody: BodySource | undefined,
  timeoutMs: number,
  applied: Applied | undefined,
  scrub: Scrubber,
  asFile: boolean,
): Promise<{ output: HttpOutput; method: string; url: URL }> {
  // One controller for the attempt, aborted by its timer or by the run's budget, and both let go
  // of when the attempt ends. AbortSignal.timeout + AbortSignal.any cost far more at a thousand
  // calls a second: the timeout's timer stays armed for its whole `timeoutMs` after the call
  // (cleared only once its signal is collected), and each signal is tracked by weak references and
  // finalization registries that the garbage collector must walk.
  const controller = new AbortController();
  const signal = controller.signal;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`The attempt took longer than ${timeoutMs} ms.`, 'TimeoutError'));
  }, timeoutMs);
  const cutOff = () => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) cutOff();
  else ctx.signal.addEventListener('abort', cutOff, { once: true });
  let current = method;
  let url = startUrl;
  let body = firstBody;
  try {
    const [{ request }, dispatcher] = await Promise.all([loadUndici(), ctx.outbound.dispatcher()]);
    for (let hop = 0; ; hop++) {
      checkLiteral(ctx, url);
      const res = await request(url, {
        method: current as 'GET',
        headers,
        body: body === undefined || typeof body === 'string' ? body : body.stream(),
        signal,
        dispatcher,
      });
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
        await res.body.dump();
        if (hop >= MAX_REDIRECTS)
          throw new StepFailure(
            `Gave up after ${MAX_REDIRECTS} redirects (last to ${redactText(location)}).`,
            {
              field: '/url',
            },
          );
        const next = parseUrl(location, url);
        // 303 always, and 301/302 after a POST, continue as a GET without body (as browsers and fetch do).
        if (
          res.statusCode === 303 ||
          ((res.statusCode === 301 || res.statusCode === 302) && current === 'POST')
        ) {
          current = current === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
          delete headers['content-type'];
          delete headers['content-length'];
        }
        // Credentials were meant for the first origin only.
        if (next.origin !== url.origin) {
          delete headers.authorization;
          delete headers.cookie;
          if (applied?.header) delete headers[applied.header];
        }
        url = next;
        continue;
      }
      const ok = res.statusCode >= 200 && res.statusCode <= 299;
      const output =
        asFile && ok && current !== 'HEAD'
          ? await storeResponse(ctx, res, url)
          : await readResponse(res, current, scrub);
      return { output, method: current, url };
    }
  } catch (err) {
    if (err instanceof StepFailure) throw err;
    if (err instanceof FileTooLarge)
      throw new StepFailure(
        `The response body is larger than ${err.maxBytes} bytes, the most a file may hold.`,
        {
          field: '/responseType',
        },
      );
    if (timedOut && !ctx.signal.aborted)
      throw new NetworkFailure(`${current} ${redact(url)} did not answer within ${timeoutMs} ms.`, {
        field: '/timeoutMs',
      });
    if (ctx.signal.aborted)
      throw new StepFailure(`${current} ${redact(url)} was cut off: the execution ran out of time.`);
    const refused = findCause(err, NetworkRefused);
    if (refused) throw new StepFailure(refused.message, { field: '/url' });
    const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } };
    const code = e.code ?? e.cause?.code;
    throw new NetworkFailure(
      `${current} ${redact(url)} failed: ${e.cause?.message ?? e.message ?? String(err)}${code ? ` (${code})` : ''}.`,
      { cause: err },
    );
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', cutOff);
  }
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new StepFailure(`"${raw}" is not an absolute http(s) URL.`, { field: '/url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new StepFailure(`Only http and https URLs can be requested, not ${url.protocol}.`, {
      field: '/url',
    });
  }
  if (url.username || url.password) {
    throw new StepFailure('The URL carries credentials; send them in an Authorization header instead.', {
      field: '/url',
    });
  }
  return url;
}

function checkLiteral(ctx: StepContext, url: URL): void {
  const why = ctx.outbound.refuseLiteral(url.hostname);
  if (why)
    throw new StepFailure(
      new NetworkRefused(url.hostname, url.hostname.replace(/^\[|\]$/g, ''), why).message,
      { field: '/url' },
    );
}

/** The URL without its query string, which often carries keys. */
function redact(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function redactText(location: string): string {
  const q = location.search(/[?#]/);
  return q === -1 ? location : location.slice(0, q);
}

function findCause<T>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let e = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof type) return e;
  return undefined;
}
