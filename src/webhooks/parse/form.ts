/**
 * `application/x-www-form-urlencoded` bodies and query strings (SPEC 4): repeated keys become arrays,
 * `a[b]=c` nests as qs nests it, with depth and key-count limits. Multipart field names nest the same
 * way (multipart.ts hands its fields to parseUrlEncoded).
 */
import qs from 'qs';
import {
  DEFAULT_PARSE_LIMITS,
  invalid,
  type ParseLimits,
  type ParsedBody,
  reason,
  toPlain,
} from './types.js';

/** Raw query string WITHOUT the leading '?' ('' for none) -> object. Repeated keys become arrays; a[b]=c nests (qs semantics). */
export function parseQuery(raw: string, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Record<string, unknown> {
  // Most webhook calls have no query string: skip qs and the copy for them.
  if (raw === '') return {};
  return parseUrlEncoded(raw, 'utf-8', limits, 'query string');
}

/** A form body, decoded by its charset (UTF-8 unless it names ISO-8859-1 or an alias). */
export function parseFormBody(raw: Buffer, charset: string | undefined, limits: ParseLimits): ParsedBody {
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

/** Map, not object literal: a charset named e.g. "constructor" must not find an inherited property. */
const FORM_CHARSETS = new Map<string, 'utf-8' | 'iso-8859-1'>([
  ['utf-8', 'utf-8'],
  ['utf8', 'utf-8'],
  ['us-ascii', 'utf-8'],
  ['iso-8859-1', 'iso-8859-1'],
  ['latin1', 'iso-8859-1'],
]);

/** Query strings, form bodies and multipart field names all nest the same way (qs). */
export function parseUrlEncoded(
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
 * and so is `__proto__` (the rule in index.ts); `constructor` with a string value is kept.
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
