/**
 * An http step's response (steps/http.ts): read into the output (JSON parsed, text, or base64
 * bytes, at most MAX_RESPONSE_BYTES), or streamed into the store as a file (`responseType: "file"`).
 */
import type { Dispatcher } from 'undici';
import type { Scrubber } from '../credentials.js';
import { type FileRef, FileTooLarge } from '../files.js';
import { type StepContext, StepFailure } from '../steps/types.js';
import { headerSafe } from './request-body.js';

export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** A response stored as a file (`responseType: "file"`) may be this big: it is streamed to the store, never held. */
export const MAX_FILE_RESPONSE_BYTES = 1024 * 1024 * 1024;

export interface HttpOutput {
  status: number;
  headers: Record<string, string | string[]>;
  body?: unknown;
  bodyEncoding?: 'base64';
  /** `responseType: "file"`: the body, stored (engine/files.ts). */
  file?: FileRef;
}

/**
 * A 2xx response body streamed into the store as a file of this execution (responseType "file"):
 * the output is `{status, headers, file}`. Its name comes from Content-Disposition, else the URL's
 * last path segment; its type from Content-Type.
 */
export async function storeResponse(ctx: StepContext, res: UndiciResponse, url: URL): Promise<HttpOutput> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = value;
  const executionId = ctx.scope?.execution.id;
  if (!ctx.files || executionId === undefined) {
    res.body.destroy();
    throw new StepFailure('Files cannot be stored here: this engine runs without a file store.', {
      field: '/responseType',
    });
  }
  const declared = Number(res.headers['content-length']);
  if (declared > MAX_FILE_RESPONSE_BYTES) {
    res.body.destroy();
    throw new FileTooLarge(MAX_FILE_RESPONSE_BYTES);
  }
  const type = headerSafe(String(res.headers['content-type'] ?? '')) || 'application/octet-stream';
  try {
    const file = await ctx.files.create(
      executionId,
      { filename: responseFilename(res.headers['content-disposition'], url), mimeType: type },
      res.body,
      MAX_FILE_RESPONSE_BYTES,
    );
    return { status: res.statusCode, headers, file };
  } finally {
    if (!res.body.readableEnded) res.body.destroy();
  }
}

/** The filename a response names (`filename*=UTF-8''…` first, then `filename=`), else the URL's last segment. */
export function responseFilename(disposition: string | string[] | undefined, url: URL): string {
  const d = Array.isArray(disposition) ? disposition[0] : disposition;
  if (d) {
    const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(d);
    if (star) {
      try {
        const name = decodeURIComponent(star[1]!.trim());
        if (name) return cleanName(name);
      } catch {
        // A malformed escape: the plain filename, if any, is next.
      }
    }
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/.exec(d);
    const name = plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2]?.trim();
    if (name) return cleanName(name);
  }
  let last = '';
  try {
    last = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  } catch {
    last = url.pathname.split('/').pop() ?? '';
  }
  return cleanName(last) || 'response';
}

/** A filename without directories or control characters, at most 255 characters. */
function cleanName(name: string): string {
  return headerSafe(name.split(/[\\/]/).pop() ?? '').slice(0, 255);
}

export type UndiciResponse = Dispatcher.ResponseData;

/**
 * The response as the step outputs it. Text and base64 bodies are scrubbed as bytes (`scrub`), so a
 * secret echoed in a binary body is masked before it is encoded; a JSON body is scrubbed once parsed
 * (by the caller, with the rest of the output), where its string escapes are decoded.
 */
export async function readResponse(
  res: UndiciResponse,
  method: string,
  scrub: Scrubber,
): Promise<HttpOutput> {
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
  const scrubbed = scrub.bytes(bytes);
  if (type === '' || /^text\/|[/+]xml\b|^application\/(javascript|x-www-form-urlencoded)/.test(type)) {
    return { status, headers, body: scrubbed.toString('utf8') };
  }
  return { status, headers, body: scrubbed.toString('base64'), bodyEncoding: 'base64' };
}

function tooBig(status: number, headers: Record<string, string | string[]>): StepFailure {
  return new StepFailure(`The response body is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB.`, {
    output: { status, headers, body: null },
  });
}
