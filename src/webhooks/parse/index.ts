/**
 * Turns a webhook request's query string and body into the trigger item's `query`, `body` and `files`
 * (SPEC 4): one parser per content type, chosen here. Every parser is fed untrusted bytes, so each one:
 *  - fails only with `AppError('invalid_body')` (types.ts `invalid`), never with a library error or a crash;
 *  - enforces limits by rejecting (a truncated body would silently hand a workflow wrong data);
 *  - returns ordinary objects passed through `toPlain` (types.ts), the one place prototype keys are
 *    handled, or (JSON) objects secure-json-parse has stripped of the same keys.
 *
 * Prototype keys (same rule for query, form, JSON, XML and multipart fields):
 *  - `__proto__` is dropped wherever it appears: assigning it is the classic prototype-pollution vector.
 *  - `constructor` is dropped when its value is an object holding a `prototype` key: that shape is the
 *    `constructor.prototype.x` gadget that pollutes through a naive deep merge downstream (the same rule
 *    secure-json-parse's `constructorAction: 'remove'` applies).
 *  - Any other `constructor` / `prototype` key is ordinary data, kept as an own data property: it only
 *    shadows `Object.prototype.constructor` on that one object and cannot change any prototype.
 *  (XML is stricter: fast-xml-parser refuses elements named `__proto__`/`constructor`/`prototype`, so such
 *  documents are rejected as invalid_body.)
 *
 * Depth is counted as qs counts `[...]` groups, i.e. nesting below the top-level value: `a[b]=1` and
 * `{"a":{"b":1}}` both have depth 1; anything deeper than `maxDepth` is rejected.
 *
 * Cost is bounded while parsing, not after: JSON and XML text is pre-scanned in one linear pass
 * (scan.ts) that refuses too deep or too many nodes at the first character past a limit, before
 * JSON.parse or fast-xml-parser run; qs splits at most maxKeys + 1 parameters and stops a key at
 * maxDepth brackets; busboy stops at maxKeys + maxFiles parts. Error messages never carry more than a
 * short excerpt of a library's message (types.ts `reason`), so an error body stays well under 4 KB.
 */
import type { MaybePromise } from '../../shared/maybe-promise.js';
import { parseFormBody } from './form.js';
import { parseJsonBody } from './json.js';
import { parseMultipart } from './multipart.js';
import { parseRaw } from './raw.js';
import { parseContentType, parseText } from './text.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits, type ParsedBody } from './types.js';
import { parseXmlBody } from './xml.js';

export { parseFlatUrlEncoded, parseQuery, parseUrlEncodedWithQs } from './form.js';
export { DEFAULT_PARSE_LIMITS, type ParsedBody, type ParsedFile, type ParseLimits } from './types.js';

/**
 * A request body by its Content-Type header (may be undefined, may have params like charset/boundary).
 * The parsed body itself for every type but multipart (busboy parses a stream: a promise of it then),
 * which spares the webhook pipeline an await. A malformed body is thrown by the first and a
 * rejection of the second (receive.ts awaits inside one async function: both reach it the same way).
 */
export function parse(
  contentType: string | undefined,
  raw: Buffer,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): MaybePromise<ParsedBody> {
  if (raw.length === 0) return { body: {}, files: [] };
  const ct = parseContentType(contentType);
  if (ct === undefined) return parseRaw('application/octet-stream', raw);
  const { type, charset } = ct;
  if (type === 'application/x-www-form-urlencoded') return parseFormBody(raw, charset, limits);
  if (type === 'application/json' || type.endsWith('+json')) return parseJsonBody(raw, charset, limits);
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml'))
    return parseXmlBody(raw, charset, limits);
  if (type.startsWith('text/')) return parseText(raw, charset);
  // busboy needs the original header: the boundary is case-sensitive and may be quoted.
  if (type === 'multipart/form-data') return parseMultipart(contentType ?? '', raw, limits);
  return parseRaw(type, raw);
}

/** parse, always as a promise: a malformed body is a rejection. */
export async function parseBody(
  contentType: string | undefined,
  raw: Buffer,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): Promise<ParsedBody> {
  return parse(contentType, raw, limits);
}
