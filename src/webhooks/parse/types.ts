/**
 * What every body parser shares: the limits, the result's shape, the one way to fail
 * (`invalid`) and the one place prototype keys are handled (`toPlain`; the rules are in index.ts).
 */
import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { StructureLimits } from './scan.js';

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
 *   ~50 MB; 16 MiB of `{},` would be 5.6 million objects, over 500 MB.
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

/** Longest excerpt of a library's message put into ours: they can quote the input at any length. */
const MAX_REASON_CHARS = 200;
/** Last guard: no invalid_body message is longer, whatever went into it (error bodies stay < 4 KB). */
const MAX_MESSAGE_CHARS = 1000;

export function invalid(message: string, hint: string, cause?: unknown): AppError {
  const capped = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message;
  // The cause is kept only when small: fast-xml-parser's validator once returned a 45 MB message.
  const keep = cause instanceof Error && cause.message.length <= MAX_MESSAGE_CHARS ? cause : undefined;
  return new AppError('invalid_body', capped, { hint, cause: keep });
}

/**
 * A library error's message without its trailing period, to embed in our own sentence: one line,
 * at most MAX_REASON_CHARS characters (JSON.parse and the XML validator quote the input).
 */
export function reason(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).slice(0, MAX_REASON_CHARS + 1);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line.replace(/\.$/, '');
}

/**
 * Deep-copies parser output into ordinary objects and arrays, dropping the prototype keys described in
 * index.ts and rejecting nesting deeper than maxDepth. Recursion is bounded by maxDepth, so even a
 * 100 000-level document cannot overflow the stack here.
 */
export function toPlain(value: unknown, maxDepth: number, depth = 0): unknown {
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

export function fileOf(field: string, filename: string, mimeType: string, data: Buffer): ParsedFile {
  const sha256 = createHash('sha256').update(data).digest('hex');
  return { field, filename, mimeType, size: data.length, sha256, data };
}
