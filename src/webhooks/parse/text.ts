/**
 * `text/*` bodies (kept as a string), and what JSON and XML share with them: the Content-Type's
 * type and charset, and decoding by that charset.
 */
import { invalid, type ParsedBody } from './types.js';

export interface ContentType {
  /** Lower-cased `type/subtype`. */
  type: string;
  /** Lower-cased, unquoted; undefined when the header names none. */
  charset?: string | undefined;
}

/** Lower-cased `type/subtype` and charset; undefined when there is no usable header at all. */
export function parseContentType(header: string | undefined): ContentType | undefined {
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

/** Decodes by the Content-Type charset; TextDecoder also strips a byte-order mark. */
export function decodeText(raw: Buffer, charset: string | undefined): string {
  try {
    // Non-fatal decoding: invalid bytes become U+FFFD, so only an unknown charset label throws here.
    return new TextDecoder(charset ?? 'utf-8').decode(raw);
  } catch (err) {
    throw invalid(`The body's charset "${charset}" is not supported.`, 'Send the body as UTF-8.', err);
  }
}

/** Other `text/*` types: the body is the decoded string. */
export function parseText(raw: Buffer, charset: string | undefined): ParsedBody {
  return { body: decodeText(raw, charset), files: [] };
}
