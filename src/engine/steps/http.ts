/**
 * `http`: an outbound request (undici). Output `{status, headers, body}`: the body is parsed JSON
 * when the response says JSON, text for text-like types, base64 (with `bodyEncoding: "base64"`)
 * otherwise. Like n8n, a non-2xx answer fails the step unless `failOnError: false` (then it is
 * data for the next steps); the response is recorded on the failed step either way.
 *
 * Limits: `timeoutMs` (default 30 s) covers the whole exchange including redirects; the body is
 * capped at 5 MiB (an execution is stored whole, so a bigger body would bloat every later step's
 * record); up to 5 redirects are followed, each hop checked against the network policy again.
 */
import { request } from 'undici';
import Type from 'typebox';
import { NetworkRefused } from '../network.js';
import { defineStep, Expr, HeaderMap, type StepContext, StepFailure } from './types.js';

export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const DEFAULT_TIMEOUT_MS = 30_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const Method = Type.Union([
  Type.Literal('GET'),
  Type.Literal('POST'),
  Type.Literal('PUT'),
  Type.Literal('PATCH'),
  Type.Literal('DELETE'),
  Type.Literal('HEAD'),
  Type.Literal('OPTIONS'),
]);

export interface HttpOutput {
  status: number;
  headers: Record<string, string | string[]>;
  body: unknown;
  bodyEncoding?: 'base64';
}

export const httpStep = defineStep({
  type: 'http',
  description: 'Send an HTTP request; its response is the output.',
  config: Type.Object(
    {
      method: Type.Optional(Method),
      url: Type.String({ minLength: 1, maxLength: 8192 }),
      headers: Type.Optional(HeaderMap()),
      query: Type.Optional(
        Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), { maxProperties: 200 }),
      ),
      body: Type.Optional(Type.Unknown()),
      timeoutMs: Type.Optional(Expr(Type.Integer({ minimum: 1, maximum: 300_000 }))),
      failOnError: Type.Optional(Expr(Type.Boolean())),
    },
    { additionalProperties: false },
  ),
  async run(config, ctx) {
    const method: string = config.method ?? 'GET';
    let url = parseUrl(config.url);
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
    let body = encodeBody(method, config.body, headers);

    const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout]);
    let current = method;
    try {
      for (let hop = 0; ; hop++) {
        checkLiteral(ctx, url);
        const res = await request(url, {
          method: current as 'GET',
          headers,
          body,
          signal,
          dispatcher: ctx.outbound.dispatcher,
        });
        const location = res.headers.location;
        if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
          await res.body.dump();
          if (hop >= MAX_REDIRECTS)
            throw new StepFailure(`Gave up after ${MAX_REDIRECTS} redirects (last to ${location}).`, {
              field: '/url',
            });
          const next = parseUrl(location, url);
          // 303 always, and 301/302 after a POST, continue as a GET without body (as browsers and fetch do).
          if (
            res.statusCode === 303 ||
            ((res.statusCode === 301 || res.statusCode === 302) && current === 'POST')
          ) {
            current = current === 'HEAD' ? 'HEAD' : 'GET';
            body = undefined;
            delete headers['content-type'];
          }
          // Credentials were meant for the first origin only.
          if (next.origin !== url.origin) {
            delete headers.authorization;
            delete headers.cookie;
          }
          url = next;
          continue;
        }
        const output = await readResponse(res, current);
        const failOnError = config.failOnError ?? true;
        if (failOnError && (output.status < 200 || output.status > 299)) {
          throw new StepFailure(
            `${current} ${redact(url)} answered ${output.status}. Set failOnError: false to go on with non-2xx responses.`,
            { output },
          );
        }
        return { output };
      }
    } catch (err) {
      if (err instanceof StepFailure) throw err;
      if (timeout.aborted)
        throw new StepFailure(`${current} ${redact(url)} did not answer within ${timeoutMs} ms.`, {
          field: '/timeoutMs',
        });
      if (ctx.signal.aborted)
        throw new StepFailure(`${current} ${redact(url)} was cut off: the execution ran out of time.`);
      const refused = findCause(err, NetworkRefused);
      if (refused) throw new StepFailure(refused.message, { field: '/url' });
      const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } };
      const code = e.code ?? e.cause?.code;
      throw new StepFailure(
        `${current} ${redact(url)} failed: ${e.cause?.message ?? e.message ?? String(err)}${code ? ` (${code})` : ''}.`,
        {
          cause: err,
        },
      );
    }
  },
});

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

function encodeBody(method: string, body: unknown, headers: Record<string, string>): string | undefined {
  if (body === undefined) return undefined;
  if (method === 'GET' || method === 'HEAD') {
    throw new StepFailure(`A ${method} request cannot carry a body; use query, or another method.`, {
      field: '/body',
    });
  }
  if (typeof body === 'string') {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    return body;
  }
  const type = headers['content-type'] ?? '';
  if (
    type.startsWith('application/x-www-form-urlencoded') &&
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body)
  ) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) {
      for (const item of Array.isArray(v) ? v : [v])
        if (item !== undefined && item !== null) form.append(k, text(item));
    }
    return form.toString();
  }
  headers['content-type'] ??= 'application/json';
  return JSON.stringify(body);
}

type UndiciResponse = Awaited<ReturnType<typeof request>>;

async function readResponse(res: UndiciResponse, method: string): Promise<HttpOutput> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = value;
  const declared = Number(res.headers['content-length']);
  if (declared > MAX_RESPONSE_BYTES) {
    res.body.destroy();
    throw tooBig(res.statusCode, headers);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_RESPONSE_BYTES) {
      res.body.destroy();
      throw tooBig(res.statusCode, headers);
    }
    chunks.push(chunk as Buffer);
  }
  const bytes = Buffer.concat(chunks);
  const status = res.statusCode;
  if (method === 'HEAD' || status === 204 || status === 304) return { status, headers, body: null };
  const type = String(res.headers['content-type'] ?? '').toLowerCase();
  if (/^application\/([\w.+-]+\+)?json\b/.test(type) || /^application\/json/.test(type)) {
    const textBody = bytes.toString('utf8');
    if (textBody.trim() === '') return { status, headers, body: null };
    try {
      return { status, headers, body: JSON.parse(textBody) };
    } catch {
      throw new StepFailure(`The response says it is JSON (${type}) but does not parse as JSON.`, {
        output: { status, headers, body: textBody.slice(0, 10_000) },
      });
    }
  }
  if (type === '' || /^text\/|[/+]xml\b|^application\/(javascript|x-www-form-urlencoded)/.test(type)) {
    return { status, headers, body: bytes.toString('utf8') };
  }
  return { status, headers, body: bytes.toString('base64'), bodyEncoding: 'base64' };
}

function tooBig(status: number, headers: Record<string, string | string[]>): StepFailure {
  return new StepFailure(`The response body is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB.`, {
    output: { status, headers, body: null },
  });
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The URL without its query string, which often carries keys. */
function redact(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function findCause<T>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let e = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof type) return e;
  return undefined;
}
