/**
 * Turns a webhook request's query string and body into the trigger item's `query`, `body` and `files`
 * (SPEC 4). Every parser here is fed untrusted bytes, so each one:
 *  - fails only with `AppError('invalid_body')`, never with a library error or a crash;
 *  - enforces limits by rejecting (a truncated body would silently hand a workflow wrong data);
 *  - returns ordinary objects passed through `toPlain`, the one place prototype keys are handled.
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
 * Cost is bounded while parsing, not after (issue 14): JSON and XML text is pre-scanned in one linear
 * pass (body-limits.ts) that refuses too deep or too many nodes at the first character past a limit,
 * before JSON.parse or fast-xml-parser run; qs splits at most maxKeys + 1 parameters and stops a key at
 * maxDepth brackets; busboy stops at maxKeys + maxFiles parts. Error messages never carry more than a
 * short excerpt of a library's message (MAX_REASON_CHARS), so an error body stays well under 4 KB.
 */
import { createHash } from 'node:crypto';
import busboy from 'busboy';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import qs from 'qs';
import sjson from 'secure-json-parse';
import { AppError } from '../errors.js';
import { type StructureLimits, scanJson, scanXml } from './body-limits.js';

export interface ParseLimits extends StructureLimits {
  /** Nesting depth for form/query `a[b][c]=` keys and for JSON/XML (default 20). */
  maxDepth: number;
  /** Max parameters in a query/form body, and max multipart fields (default 1000). */
  maxKeys: number;
  /** Max multipart files (default 20). */
  maxFiles: number;
}

/**
 * Fixed, not configurable: they bound what one request may cost whatever HOOKFLOW_MAX_BODY_BYTES says
 * (up to 1 GiB), and no legitimate webhook comes near them. Measured on Node 20 (heap after parsing):
 * - maxJsonValues 2 000 000: a scalar costs ~20 bytes, so ~40 MB; a realistic 16 MiB JSON export
 *   (records of ~110 bytes, 9 values each) has ~1.4 million values and is accepted.
 * - maxJsonContainers 500 000: an object or array costs ~100 bytes (2 million `{}` took 206 MB), so
 *   ~50 MB; 16 MiB of `{},` would be 5.6 million objects (~900 MB with the copy made before issue 14).
 * - maxXmlNodes 100 000: fast-xml-parser spends ~40× JSON.parse's time per byte and ~200 bytes per
 *   element (500 000 `<a b="1"/>` took 152 MB), so 100 000 elements or attributes stay well under a
 *   second of parsing; XML webhooks (SOAP callbacks, feeds) are far smaller.
 */
export const DEFAULT_PARSE_LIMITS: ParseLimits = Object.freeze({
  maxDepth: 20,
  maxKeys: 1000,
  maxFiles: 20,
  maxJsonValues: 2_000_000,
  maxJsonContainers: 500_000,
  maxXmlNodes: 100_000,
});

export interface ParsedFile {
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  sha256: string;
  data: Buffer;
}

export interface ParsedBody {
  body: unknown;
  files: ParsedFile[];
}

/** Raw query string WITHOUT the leading '?' ('' for none) -> object. Repeated keys become arrays; a[b]=c nests (qs semantics). */
export function parseQuery(raw: string, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Record<string, unknown> {
  // Most webhook calls have no query string: skip qs and the copy for them.
  if (raw === '') return {};
  return parseUrlEncoded(raw, 'utf-8', limits, 'query string');
}

/** Parse a request body by its Content-Type header (may be undefined, may have params like charset/boundary). */
export async function parseBody(
  contentType: string | undefined,
  raw: Buffer,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): Promise<ParsedBody> {
  return parseBodyNow(contentType, raw, limits);
}

/**
 * parseBody for the webhook hot path: the parsed body itself for every type but multipart (busboy
 * parses that as a stream: a Promise of it then), which spares the request an await. Throws
 * (synchronously) what parseBody rejects with.
 */
export function parseBodyNow(
  contentType: string | undefined,
  raw: Buffer,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): ParsedBody | Promise<ParsedBody> {
  if (raw.length === 0) return { body: {}, files: [] };
  const ct = parseContentType(contentType);
  if (ct === undefined) return rawBody('application/octet-stream', raw);
  const { type, charset } = ct;

  if (type === 'application/x-www-form-urlencoded') {
    const formCharset = FORM_CHARSETS.get(charset ?? 'utf-8');
    if (formCharset === undefined) {
      throw invalid(
        `The form body's charset "${charset}" is not supported.`,
        'Send form bodies as UTF-8 or ISO-8859-1.',
      );
    }
    const text = raw.toString(formCharset === 'utf-8' ? 'utf8' : 'latin1');
    return { body: parseUrlEncoded(text, formCharset, limits, 'form body'), files: [] };
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    return { body: parseJson(decodeText(raw, charset), limits), files: [] };
  }
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) {
    return { body: parseXml(decodeText(raw, charset), limits), files: [] };
  }
  if (type.startsWith('text/')) return { body: decodeText(raw, charset), files: [] };
  // busboy needs the original header: the boundary is case-sensitive and may be quoted.
  if (type === 'multipart/form-data') return parseMultipart(contentType ?? '', raw, limits);
  return rawBody(type, raw);
}

// ---------------------------------------------------------------------------------------------------

/** Map, not object literal: a charset named e.g. "constructor" must not find an inherited property. */
const FORM_CHARSETS = new Map<string, 'utf-8' | 'iso-8859-1'>([
  ['utf-8', 'utf-8'],
  ['utf8', 'utf-8'],
  ['us-ascii', 'utf-8'],
  ['iso-8859-1', 'iso-8859-1'],
  ['latin1', 'iso-8859-1'],
]);

const MIME_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

/** Longest excerpt of a library's message put into ours: they can quote the input at any length. */
const MAX_REASON_CHARS = 200;
/** Last guard: no invalid_body message is longer, whatever went into it (error bodies stay < 4 KB). */
const MAX_MESSAGE_CHARS = 1000;

function invalid(message: string, hint: string, cause?: unknown): AppError {
  const capped = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message;
  // The cause is kept only when small: fast-xml-parser's validator returned a 45 MB message once.
  const keep = cause instanceof Error && cause.message.length <= MAX_MESSAGE_CHARS ? cause : undefined;
  return new AppError('invalid_body', capped, { hint, cause: keep });
}

/**
 * A library error's message without its trailing period, to embed in our own sentence: one line,
 * at most MAX_REASON_CHARS characters (JSON.parse and the XML validator quote the input).
 */
function reason(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).slice(0, MAX_REASON_CHARS + 1);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line.replace(/\.$/, '');
}

/** Lower-cased `type/subtype` and charset; undefined when there is no usable header at all. */
function parseContentType(header: string | undefined): { type: string; charset?: string } | undefined {
  if (header === undefined) return undefined;
  // Most webhook bodies name a bare type (`application/json`): no split, no parameter loop.
  if (!header.includes(';')) {
    const type = header.trim().toLowerCase();
    return type === '' ? undefined : { type };
  }
  const [essence = '', ...params] = header.split(';');
  const type = essence.trim().toLowerCase();
  if (type === '') return undefined;
  let charset: string | undefined;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === 'charset') {
      charset = param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
    }
  }
  return { type, charset };
}

/**
 * Deep-copies parser output into ordinary objects and arrays, dropping the prototype keys described at the
 * top of this file and rejecting nesting deeper than maxDepth. Recursion is bounded by maxDepth, so even
 * a 100 000-level JSON document cannot overflow the stack here.
 */
function toPlain(value: unknown, maxDepth: number, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > maxDepth) {
    throw invalid(
      `The body is nested more than ${maxDepth} levels deep.`,
      'Flatten the payload; deeply nested bodies are refused to protect the server.',
    );
  }
  if (Array.isArray(value)) return value.map((item: unknown) => toPlain(item, maxDepth, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') continue;
    if (
      key === 'constructor' &&
      typeof item === 'object' &&
      item !== null &&
      Object.hasOwn(item, 'prototype')
    ) {
      continue;
    }
    // Plain assignment creates an own data property for every key except `__proto__` (the only accessor
    // on Object.prototype), which was skipped above.
    out[key] = toPlain(item, maxDepth, depth + 1);
  }
  return out;
}

/** Query strings, form bodies and multipart field names all nest the same way (qs). */
function parseUrlEncoded(
  text: string,
  charset: 'utf-8' | 'iso-8859-1',
  limits: ParseLimits,
  what: string,
): Record<string, unknown> {
  return (
    parseFlatUrlEncoded(text, charset, limits, what === 'query string') ??
    parseUrlEncodedWithQs(text, charset, limits, what)
  );
}

/** Exported for the test that holds the fast path to it; parseUrlEncoded's general path. */
export function parseUrlEncodedWithQs(
  text: string,
  charset: 'utf-8' | 'iso-8859-1',
  limits: ParseLimits,
  what: string,
): Record<string, unknown> {
  tooManyBrackets(text, limits, what);
  let parsed: unknown;
  try {
    parsed = qs.parse(text, {
      charset,
      depth: limits.maxDepth,
      strictDepth: true, // throw instead of qs's default of keeping the too-deep rest as one flat key
      parameterLimit: limits.maxKeys,
      // An array can hold at most one element per parameter; qs's default (20) would turn the 21st
      // repeat of `a=` into an object with numeric keys. Indices beyond maxKeys are rejected instead.
      arrayLimit: limits.maxKeys,
      throwOnLimitExceeded: true, // qs silently drops parameters past the limit otherwise
      // Null-prototype objects keep keys such as `toString` as data instead of qs discarding them;
      // toPlain then makes them ordinary objects and drops the prototype keys.
      plainObjects: true,
      ignoreQueryPrefix: what === 'query string',
    });
  } catch (err) {
    throw invalid(
      `The ${what} exceeds a parsing limit: ${reason(err)}.`,
      `Send at most ${limits.maxKeys} parameters nested at most ${limits.maxDepth} levels deep, or send JSON.`,
      err,
    );
  }
  return toPlain(parsed, limits.maxDepth) as Record<string, unknown>;
}

/**
 * At most maxKeys parameters nested at most maxDepth levels can hold only so many brackets in their
 * keys; a body past that is refused after reading at most that many of them. Without it, one 15 MB
 * key of `[b]`s cost qs ~150 ms of the event loop (its passes over the whole key: %5B replacement,
 * decoding, splitting) before its depth check refused it. Values are not counted (a form value may
 * carry JSON, as Slack's `payload=` does), and the scan stops past maxKeys parameters, which qs
 * refuses cheaply by itself.
 */
function tooManyBrackets(text: string, limits: ParseLimits, what: string): void {
  const most = limits.maxKeys * (limits.maxDepth + 1) * 2;
  const special = /[[\]&=]|%5[bd]/gi;
  let inKey = true;
  let brackets = 0;
  let parameters = 1;
  for (let m = special.exec(text); m !== null; m = special.exec(text)) {
    const c = m[0];
    if (c === '&') {
      if (++parameters > limits.maxKeys) return;
      inKey = true;
    } else if (c === '=') {
      inKey = false;
    } else if (inKey && ++brackets > most) {
      throw invalid(
        `The ${what} exceeds a parsing limit: its keys hold more brackets than ${limits.maxKeys} parameters at depth ${limits.maxDepth} can (near character ${special.lastIndex}).`,
        `Send at most ${limits.maxKeys} parameters nested at most ${limits.maxDepth} levels deep, or send JSON.`,
      );
    }
  }
}

/**
 * What makes qs nest a key: `[` or `]`, raw or percent-encoded (qs turns %5B/%5D back into brackets
 * in the whole string before it splits it, values included). Dots do not: allowDots is off.
 */
const NESTING = /[[\]]|%5[bd]/i;

/**
 * The common flat case (`a=1&b=x+y`) without qs: exactly what parseUrlEncodedWithQs returns, or
 * undefined to leave the input to it — anything that could nest, and anything qs would refuse
 * (more than maxKeys parameters) or that the limits make unusual. test/webhooks/parse.test.ts holds
 * the two to identity on generated hostile strings. With the qs options above a flat string means:
 * split at every `&` (no other delimiter); the key ends at the first `=` (none: the value is '');
 * both decoded alike (decodeComponent); a repeated key collects its values into an array in order
 * (arrayLimit = maxKeys cannot be reached with at most maxKeys parameters); an empty key is dropped,
 * and so is `__proto__` (the rule at the top of this file); `constructor` with a string value is kept.
 * Measured: parseBody of the form `param1=a&param2=b` ~2.1 µs through qs and toPlain, ~0.5 µs with this
 * path; parseQuery of two parameters ~1.8 µs, ~0.22 µs.
 */
export function parseFlatUrlEncoded(
  text: string,
  charset: 'utf-8' | 'iso-8859-1',
  limits: ParseLimits,
  ignoreQueryPrefix: boolean,
): Record<string, unknown> | undefined {
  const { maxKeys, maxDepth } = limits;
  // maxDepth >= 1 lets a repeated key's array through toPlain; maxKeys below 2^32 - 1 keeps qs's
  // split(delimiter, maxKeys + 1) from wrapping around.
  if (!(maxDepth >= 1 && Number.isInteger(maxKeys) && maxKeys >= 1 && maxKeys < 0xffff_ffff))
    return undefined;
  if (NESTING.test(text)) return undefined;
  const out: Record<string, string | string[]> = {};
  const end = text.length;
  let start = ignoreQueryPrefix && text.charCodeAt(0) === 0x3f /* ? */ ? 1 : 0;
  // The next `=` at or after `start`, found once per `=` so a long run of `&` without any costs no rescans.
  let eq = text.indexOf('=', start);
  for (let parameters = 1; ; parameters++) {
    if (parameters > maxKeys) return undefined;
    let amp = text.indexOf('&', start);
    if (amp === -1) amp = end;
    if (eq !== -1 && eq < start) eq = text.indexOf('=', start);
    const valued = eq !== -1 && eq < amp;
    const key = decodeComponent(text.slice(start, valued ? eq : amp), charset);
    if (key !== '' && key !== '__proto__') {
      const value = valued ? decodeComponent(text.slice(eq + 1, amp), charset) : '';
      const earlier = Object.hasOwn(out, key) ? out[key] : undefined;
      if (earlier === undefined) out[key] = value;
      else if (typeof earlier === 'string') out[key] = [earlier, value];
      else earlier.push(value);
    }
    if (amp === end) return out;
    start = amp + 1;
  }
}

/** qs's decoder (utils.decode): `+` is a space; a malformed %-sequence leaves the text as it is. */
function decodeComponent(text: string, charset: 'utf-8' | 'iso-8859-1'): string {
  if (!text.includes('%')) return text.includes('+') ? text.replaceAll('+', ' ') : text;
  const spaced = text.replaceAll('+', ' ');
  if (charset === 'iso-8859-1') {
    // What qs does with `unescape` for each %XX (one byte, one character).
    return spaced.replace(/%[0-9a-f]{2}/gi, (sequence) =>
      String.fromCharCode(Number.parseInt(sequence.slice(1), 16)),
    );
  }
  try {
    return decodeURIComponent(spaced);
  } catch {
    // URIError: a malformed sequence such as `%E0%A4%A` or `%zz`; qs keeps the whole text undecoded.
    return spaced;
  }
}

/** Decodes by the Content-Type charset; TextDecoder also strips a byte-order mark. */
function decodeText(raw: Buffer, charset: string | undefined): string {
  try {
    // Non-fatal decoding: invalid bytes become U+FFFD, so only an unknown charset label throws here.
    return new TextDecoder(charset ?? 'utf-8').decode(raw);
  } catch (err) {
    throw invalid(`The body's charset "${charset}" is not supported.`, 'Send the body as UTF-8.', err);
  }
}

function parseJson(text: string, limits: ParseLimits): unknown {
  // Depth and size first, in one pass: JSON.parse has no limits of its own.
  scanJson(text, limits);
  try {
    // No toPlain copy: JSON.parse builds ordinary objects and arrays, secure-json-parse drops exactly
    // the keys toPlain would (`__proto__`, and `constructor` holding a `prototype` key), and scanJson
    // has checked the depth. The copy doubled the cost of a large body (16 MiB: +60% time, +100 MB).
    return sjson.parse(text, null, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (err) {
    // JSON.parse's message carries the position, e.g. "... in JSON at position 7".
    throw invalid(
      `The body is not valid JSON: ${reason(err)}.`,
      'Fix the JSON syntax, or send the Content-Type that matches the body.',
      err,
    );
  }
}

function parseXml(text: string, limits: ParseLimits): unknown {
  const hint = 'Send well-formed XML, or the Content-Type that matches the body.';
  // Depth and size first: the validator keeps a stack of every open tag and puts it in its message.
  scanXml(text, limits);
  const check = XMLValidator.validate(text);
  if (check !== true) {
    const { msg, line, col } = check.err;
    throw invalid(`The body is not well-formed XML: ${reason(msg)} (line ${line}, column ${col}).`, hint);
  }
  let parsed: unknown;
  try {
    parsed = new XMLParser({
      // Attributes are kept next to child elements under an '@_' prefix (fast-xml-parser's default):
      // <order id="7"><item>x</item></order> -> { order: { '@_id': '7', item: 'x' } }; text beside
      // attributes or children goes under '#text'; repeated elements become arrays.
      ignoreAttributes: false,
      attributeNamePrefix: '@_',
      // Values stay strings, as in the query and form: "007" must not become 7.
      parseTagValue: false,
      parseAttributeValue: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      // Entities: the five XML ones and character references (&#233;) are decoded; DOCTYPE-declared
      // entities are bounded so a "billion laughs" body cannot blow up memory, and external (SYSTEM)
      // entities are refused by the parser.
      htmlEntities: true,
      processEntities: {
        enabled: true,
        maxEntityCount: 50,
        maxEntitySize: 1_000,
        maxTotalExpansions: 1_000,
        maxExpandedLength: 100_000,
      },
      // Stops deep documents early; toPlain applies the exact depth limit to the result.
      maxNestedTags: limits.maxDepth + 1,
    }).parse(text);
  } catch (err) {
    throw invalid(`The XML body could not be parsed: ${reason(err)}.`, hint, err);
  }
  return toPlain(parsed, limits.maxDepth);
}

function fileOf(field: string, filename: string, mimeType: string, data: Buffer): ParsedFile {
  const sha256 = createHash('sha256').update(data).digest('hex');
  return { field, filename, mimeType, size: data.length, sha256, data };
}

/** Unknown or missing content types keep the bytes as one file named 'body'. */
function rawBody(type: string, raw: Buffer): ParsedBody {
  const mimeType = MIME_TYPE.test(type) ? type : 'application/octet-stream';
  return { body: {}, files: [fileOf('body', 'body', mimeType, raw)] };
}

async function parseMultipart(header: string, raw: Buffer, limits: ParseLimits): Promise<ParsedBody> {
  const { fields, files } = await readMultipart(header, raw, limits);
  // Field names nest like form keys. Re-encoding the pairs lets qs apply the very same rules and limits;
  // URLSearchParams escapes '[' and ']', which qs decodes before it splits a key into its brackets.
  const body = parseUrlEncoded(new URLSearchParams(fields).toString(), 'utf-8', limits, 'multipart body');
  return { body, files };
}

/**
 * A file's bytes without copying them when busboy handed them over as consecutive views of the
 * request body (it does for a body given in one piece, as here): the body is held until the request
 * is stored anyway, and a copy made a 16 MiB upload cost 16 MiB more while it was stored.
 */
function joined(chunks: Buffer[], raw: Buffer): Buffer {
  const first = chunks[0];
  if (first === undefined) return Buffer.alloc(0);
  let end = first.byteOffset;
  for (const chunk of chunks) {
    if (chunk.buffer !== raw.buffer || chunk.byteOffset !== end) return Buffer.concat(chunks);
    end += chunk.length;
  }
  return raw.subarray(first.byteOffset - raw.byteOffset, end - raw.byteOffset);
}

/** 64 KiB: a handful of parts per slice, and few enough slices that feeding them costs nothing. */
const MULTIPART_SLICE = 64 * 1024;

function readMultipart(
  header: string,
  raw: Buffer,
  limits: ParseLimits,
): Promise<{ fields: [string, string][]; files: ParsedFile[] }> {
  return new Promise((resolve, reject) => {
    const fields: [string, string][] = [];
    const files: ParsedFile[] = [];
    let settled = false;
    const malformed = 'Send a complete multipart/form-data body and its boundary parameter.';
    const tooMany = `Send at most ${limits.maxKeys} fields and ${limits.maxFiles} files.`;
    // Parts without a usable name are skipped by busboy without counting as fields or files; 16 MB
    // of them kept it busy for seconds. Every part counts here, named or not.
    const maxParts = limits.maxKeys + limits.maxFiles;
    const fail = (message: string, hint: string, cause?: unknown) => {
      if (settled) return;
      settled = true;
      reject(invalid(message, hint, cause));
    };

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': header },
        // Size limits are left to the server's body-size limit: busboy's defaults would silently cut
        // field names at 100 bytes and values at 1 MB.
        limits: {
          fields: limits.maxKeys,
          files: limits.maxFiles,
          // busboy signals partsLimit on reaching the count, so one more than allowed: "more than maxParts".
          parts: maxParts + 1,
          fieldNameSize: Number.POSITIVE_INFINITY,
          fieldSize: Number.POSITIVE_INFINITY,
          fileSize: Number.POSITIVE_INFINITY,
        },
      });
    } catch (err) {
      // e.g. "Multipart: Boundary not found"
      fail(`The multipart body cannot be read: ${reason(err)}.`, malformed, err);
      return;
    }

    parser.on('field', (name, value) => fields.push([name, value]));
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // busboy destroys an unfinished file stream with "Unexpected end of file" when the body is cut
      // short; without this listener that error would be unhandled and crash the process.
      stream.on('error', (err) => fail(`The multipart body is malformed: ${reason(err)}.`, malformed, err));
      stream.on('end', () =>
        files.push(fileOf(field, info.filename ?? '', info.mimeType, joined(chunks, raw))),
      );
    });
    parser.on('fieldsLimit', () =>
      fail(`The multipart body has more than ${limits.maxKeys} fields.`, tooMany),
    );
    parser.on('filesLimit', () =>
      fail(`The multipart body has more than ${limits.maxFiles} files.`, tooMany),
    );
    parser.on('partsLimit', () => fail(`The multipart body has more than ${maxParts} parts.`, tooMany));
    parser.on('error', (err) => fail(`The multipart body is malformed: ${reason(err)}.`, malformed, err));
    // 'close' follows 'finish', which busboy delays until every file stream has ended.
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      resolve({ fields, files });
    });
    // Fed in slices so a limit stops the work: busboy otherwise reads the rest of a body it has
    // already given up on. Slices are views of `raw`, so joined() still avoids copying files.
    for (let at = 0; at < raw.length && !settled; at += MULTIPART_SLICE) {
      parser.write(raw.subarray(at, at + MULTIPART_SLICE));
    }
    if (settled) parser.destroy();
    else parser.end();
  });
}
