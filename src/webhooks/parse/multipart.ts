/**
 * `multipart/form-data` bodies: fields in `body` (their names nest like form keys), files in `files`
 * (SPEC 4). The one parser that answers with a promise: busboy parses a stream.
 */
import busboy from 'busboy';
import { parseUrlEncoded } from './form.js';
import { fileOf, invalid, type ParseLimits, type ParsedBody, type ParsedFile, reason } from './types.js';

/** `header` is the original Content-Type: the boundary is case-sensitive and may be quoted. */
export async function parseMultipart(header: string, raw: Buffer, limits: ParseLimits): Promise<ParsedBody> {
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
