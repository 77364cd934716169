/**
 * An http step's request body (steps/http.ts): encoded from its `body` (JSON, form or text; a file
 * reference sent raw) or `multipart`, and as the record shows it.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { asFileRef, type FileRef, fileRefAt, openFile } from '../files.js';
import { type StepContext, StepFailure } from '../steps/types.js';

/**
 * A request body: text, or a stream made anew for each attempt and redirect (a file, or
 * multipart with files, read from the store as it is sent) with its length in bytes.
 */
export type BodySource = string | { stream: () => Readable; length: number };

/** The recorded request body is cut here (the whole execution is stored, as for responses). */
export const MAX_RECORDED_BODY_CHARS = 64 * 1024;

/**
 * The body as the record shows it (`request.body`): the text sent (JSON, form or plain, cut at
 * MAX_RECORDED_BODY_CHARS with `bodyTruncated`), or what a streamed body is made of — the file
 * sent, or multipart's fields and files — never the file's bytes.
 */
export function recordedBody(
  config: {
    body?: unknown;
    multipart?: { fields?: Record<string, unknown>; files?: Record<string, unknown> };
  },
  body: BodySource | undefined,
): { body?: unknown; bodyTruncated?: true } {
  if (body === undefined) return {};
  if (typeof body === 'string')
    return body.length > MAX_RECORDED_BODY_CHARS
      ? { body: body.slice(0, MAX_RECORDED_BODY_CHARS), bodyTruncated: true }
      : { body };
  const described = (v: unknown): unknown => {
    const ref = asFileRef(v);
    return ref ? { file: { filename: ref.filename, mimeType: ref.mimeType, size: ref.size } } : v;
  };
  if (config.multipart) {
    const files = Object.entries(config.multipart.files ?? {}).map(([k, v]) => [
      k,
      Array.isArray(v) ? v.map(described) : described(v),
    ]);
    return {
      body: { multipart: { fields: config.multipart.fields ?? {}, files: Object.fromEntries(files) } },
    };
  }
  return { body: described(config.body) };
}

export function encodeBody(
  method: string,
  body: unknown,
  headers: Record<string, string>,
  ctx: StepContext,
): BodySource | undefined {
  if (body === undefined) return undefined;
  if (method === 'GET' || method === 'HEAD') {
    throw new StepFailure(`A ${method} request cannot carry a body; use query, or another method.`, {
      field: '/body',
    });
  }
  // A file reference is sent as the body itself, with its type (SPEC 7e).
  const file = asFileRef(body);
  if (file) {
    headers['content-type'] ??= headerSafe(file.mimeType) || 'application/octet-stream';
    headers['content-length'] = String(file.size);
    return { stream: () => openFile(ctx.files, file, '/body'), length: file.size };
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

/**
 * `multipart: {fields, files}` as a multipart/form-data body (RFC 7578): fields first, then each
 * file (a reference, or a list of them) with its filename and type, streamed from the store. The
 * length is known beforehand (the references carry their sizes), so it is sent as Content-Length.
 */
export function multipartBody(
  method: string,
  multipart: { fields?: Record<string, unknown>; files?: Record<string, unknown> },
  headers: Record<string, string>,
  ctx: StepContext,
): BodySource {
  if (method === 'GET' || method === 'HEAD') {
    throw new StepFailure(`A ${method} request cannot carry a body; use query, or another method.`, {
      field: '/multipart',
    });
  }
  const boundary = `----hookflow${randomBytes(12).toString('hex')}`;
  const parts: (Buffer | { ref: FileRef; field: string })[] = [];
  for (const [name, value] of Object.entries(multipart.fields ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === undefined || v === null) continue;
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${text(v)}\r\n`,
          'utf8',
        ),
      );
    }
  }
  for (const [name, value] of Object.entries(multipart.files ?? {})) {
    const list = Array.isArray(value) ? value : [value];
    list.forEach((v, i) => {
      const field = `/multipart/files/${name}${Array.isArray(value) ? `/${i}` : ''}`;
      const ref = fileRefAt(v, field);
      const type = headerSafe(ref.mimeType) || 'application/octet-stream';
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"; filename="${quoted(ref.filename)}"\r\nContent-Type: ${type}\r\n\r\n`,
          'utf8',
        ),
        { ref, field },
        Buffer.from('\r\n'),
      );
    });
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const length = parts.reduce((n, p) => n + (Buffer.isBuffer(p) ? p.length : p.ref.size), 0);
  headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
  headers['content-length'] = String(length);
  async function* stream(): AsyncGenerator<Uint8Array> {
    for (const part of parts) {
      if (Buffer.isBuffer(part)) yield part;
      else yield* openFile(ctx.files, part.ref, part.field);
    }
  }
  return { stream: () => Readable.from(stream(), { objectMode: false }), length };
}

/** A name or filename inside a multipart header's quotes (as browsers escape them: WHATWG HTML's form encoding). */
function quoted(s: string): string {
  return s.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

/** A value a header can carry as it is: without line breaks and control characters. */
export function headerSafe(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return s.replace(/[\x00-\x1f\x7f]/g, '').trim();
}

/** A value as text: a string as it is, anything else as JSON. */
export function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}
