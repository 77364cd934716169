/** Bodies of any other content type, or of none: the bytes kept as one file named 'body' (SPEC 4). */
import { fileOf, type ParsedBody } from './types.js';

const MIME_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

/** `type` becomes the file's mimeType when it is a well-formed one, else application/octet-stream. */
export function parseRaw(type: string, raw: Buffer): ParsedBody {
  const mimeType = MIME_TYPE.test(type) ? type : 'application/octet-stream';
  return { body: {}, files: [fileOf('body', 'body', mimeType, raw)] };
}
