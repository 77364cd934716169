/**
 * `hookflow listen --forward-to`: a capture re-sent to the developer's own receiver.
 */
import http from 'node:http';
import { XMLBuilder } from 'fast-xml-parser';
import { type Dispatcher, request } from 'undici';
import { describe } from '../api.js';
import { type CapturedItem, headerValue, isEmptyObject, oneLine, plural, text, truncate } from './format.js';

// A local receiver that never answers must not stall the captures queued behind it.
const FORWARD_TIMEOUT_MS = 30_000;
// A non-2xx answer from the receiver is shown, cut to this many characters.
const RESPONSE_PREVIEW_CHARS = 1_000;

// Per-hop headers (RFC 9110 7.6.1) and the ones fetch computes itself; content-encoding goes because
// the stored body is already decoded, and expect because fetch refuses it.
const DROPPED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-encoding',
  'expect',
]);

export interface ForwardPlan {
  url: URL;
  method: string;
  /** Lower-case names; repeated headers as arrays. */
  headers: Record<string, string | string[]>;
  body: string | FormData | undefined;
  notes: string[];
}

// RFC 9110 field-name token; a value may not hold CR, LF or NUL.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_HEADER_VALUE = /[\r\n\0]/;

/**
 * The request to re-send for a captured item. The store keeps the parsed item, not the raw bytes, so
 * the body is re-encoded from it: JSON → JSON, form → URL-encoded (nested keys as qs writes them),
 * multipart → multipart fields, XML → XML, text → as is. Files (multipart files, binary bodies) are
 * not in the item and are left out with a note. Signatures over the original bytes will not verify.
 * The captured query string is appended to the target URL's own.
 */
export function planForward(target: URL, item: CapturedItem): ForwardPlan {
  const notes: string[] = [];
  const url = new URL(target);
  for (const [key, value] of flatten(item.query ?? {})) url.searchParams.append(key, value);

  const headers: Record<string, string | string[]> = {};
  const connectionTokens = (headerValue(item.headers, 'connection') ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
  const masked: string[] = [];
  for (const [name, value] of Object.entries(item.headers ?? {})) {
    const lower = name.toLowerCase();
    if (DROPPED_HEADERS.has(lower) || connectionTokens.includes(lower)) continue;
    const values = Array.isArray(value) ? value : [value];
    if (!HEADER_NAME.test(name) || values.some((v) => BAD_HEADER_VALUE.test(v))) {
      notes.push(`header ${JSON.stringify(name)} left out: not valid in a request`);
      continue;
    }
    if (values.includes('***')) masked.push(lower);
    headers[lower] = values.length === 1 ? values[0]! : values;
  }
  if (masked.length > 0) notes.push(`${masked.join(', ')} masked by hookflow, sent as ***`);

  const method = item.method.toUpperCase();
  const files = item.files ?? [];
  const contentType = headerValue(item.headers, 'content-type') ?? '';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const bodyless =
    method === 'GET' || method === 'HEAD' || headerValue(item.headers, 'content-length') === '0';
  let body: ForwardPlan['body'];

  if (!bodyless) {
    const raw = files.find((f) => f.field === 'body');
    if (type === 'multipart/form-data') {
      const form = new FormData();
      for (const [key, value] of flatten(item.body)) form.append(key, value);
      body = form;
      // A new boundary is written with the body; the captured header's boundary would not match.
      delete headers['content-type'];
    } else if (raw) {
      notes.push(
        `the ${raw.mimeType} body (${raw.size} bytes) is not kept in the capture; sent without a body`,
      );
    } else if (typeof item.body === 'string') {
      body = item.body;
    } else if (type === 'application/x-www-form-urlencoded') {
      body = new URLSearchParams(flatten(item.body)).toString();
    } else if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) {
      body = XML.build(item.body) as string;
      notes.push('XML re-serialised from the parsed body');
    } else if (type === 'application/json' || type.endsWith('+json')) {
      body = JSON.stringify(item.body ?? {});
    } else if (!isEmptyObject(item.body)) {
      body = JSON.stringify(item.body);
      notes.push(`body sent as JSON (the capture does not say how ${type || 'it'} was encoded)`);
    }
    // The re-encoded body is UTF-8, whatever charset the original declared.
    if (
      typeof body === 'string' &&
      /;\s*charset=/i.test(contentType) &&
      !/;\s*charset="?utf-?8"?/i.test(contentType)
    ) {
      headers['content-type'] = contentType.replace(/;\s*charset=[^;]*/i, '; charset=utf-8');
    }
  }
  const skipped = files.filter((f) => f.field !== 'body');
  if (skipped.length > 0) {
    notes.push(
      `${plural(skipped.length, 'file')} not forwarded (${skipped.map((f) => `${f.field}: ${f.filename}`).join(', ')})`,
    );
  }
  return { url, method, headers, body, notes };
}

// Mirrors the parser options in src/webhooks/parse/xml.ts: attributes under '@_', text under '#text'.
const XML = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text' });

/**
 * Re-sends a capture and describes the answer: `→ forwarded: 200 OK (12 ms)`. Never throws, and refuses
 * no target: it is the developer's own receiver. undici's request() rather than fetch(), because fetch
 * adds headers of its own (accept-language, sec-fetch-mode, accept-encoding) the provider never sent;
 * like fetch with redirect: 'manual', it shows a redirect instead of following it.
 */
export async function forward(target: URL, item: CapturedItem): Promise<string> {
  const started = performance.now();
  const elapsed = () => `${Math.round(performance.now() - started)} ms`;
  let notes = '';
  try {
    const plan = planForward(target, item);
    notes = plan.notes.map((n) => `\n  note: ${oneLine(n)}`).join('');
    let { headers, body } = plan;
    let bytes: string | Buffer | undefined;
    if (body instanceof FormData) {
      // Serialised by the platform's multipart encoder, which also gives the boundary.
      const encoded = new Response(body);
      headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
      bytes = Buffer.from(await encoded.arrayBuffer());
      body = undefined;
    } else {
      bytes = body;
    }
    const res = await request(plan.url, {
      method: plan.method as Dispatcher.HttpMethod,
      headers,
      body: bytes ?? null,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const answer = await res.body.text();
    const status = `${res.statusCode} ${http.STATUS_CODES[res.statusCode] ?? ''}`.trim();
    const preview =
      res.statusCode >= 300 && answer !== '' ? `\n${text(truncate(answer, RESPONSE_PREVIEW_CHARS))}` : '';
    return `→ forwarded: ${status} (${elapsed()})${notes}${preview}`;
  } catch (err) {
    const timedOut =
      err instanceof Error &&
      (err.name === 'TimeoutError' || (err.cause as Error | undefined)?.name === 'TimeoutError');
    const why = timedOut ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s` : describe(err);
    return `→ forward failed: ${why} (${elapsed()})${notes}`;
  }
}

/**
 * A parsed form/query value back to key/value pairs the way qs writes them, so hookflow (qs) or any
 * qs-style parser reads the same structure: {a: {b: '1'}} → a[b]=1; arrays of scalars repeat the key
 * (a=1&a=2); arrays holding objects are indexed (a[0][b]=1).
 */
export function flatten(value: unknown, prefix = ''): [string, string][] {
  if (value === null || value === undefined) return prefix ? [[prefix, '']] : [];
  if (Array.isArray(value)) {
    const scalars = value.every((v) => v === null || typeof v !== 'object');
    return value.flatMap((v, i) => flatten(v, scalars ? prefix : `${prefix}[${i}]`));
  }
  if (typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}[${k}]` : k));
  }
  return prefix ? [[prefix, String(value)]] : [];
}
