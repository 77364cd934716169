/**
 * The trigger item (SPEC 4): what a webhook call becomes for the workflow — method, path, params,
 * query, headers (credentials masked), parsed body, files (stored as blobs beside it), the URL it
 * came to, the mode and when it arrived; `auth.claims` when a JWT was verified.
 */
import { SESSION_COOKIE } from '../accounts/accounts.js';
import { isoString, newId } from '../ids.js';
import type { NewBlobRow } from '../store/schema.js';
import type { AuthResult } from './auth/types.js';
import type { ParsedFile } from './parse/index.js';
import { trimSlashes } from '../shared/path.js';
import type { Mode } from './triggers.js';

export interface InboundRequest {
  method: string;
  /** The part after `/webhook/` or `/webhook-test/`, as received (no query string). */
  path: string;
  /** The query string without `?` ('' when none). */
  rawQuery: string;
  /** Node's lower-cased header map. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  ip: string;
  receivedAt: Date;
}

export interface TriggerItem {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[]>;
  body: unknown;
  files: ItemFile[];
  webhookUrl: string;
  executionMode: Mode;
  receivedAt: string;
  auth?: { claims: Record<string, unknown> };
}

export interface ItemFile {
  id: string;
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  sha256: string;
}

const MASK = '***';

/** The item of one call, and the blob rows of its files (stored in the same transaction). */
export function buildItem(call: {
  mode: Mode;
  req: InboundRequest;
  params: Record<string, string>;
  query: Record<string, unknown>;
  parsed: { body: unknown; files: ParsedFile[] };
  auth: AuthResult;
  baseUrl: string;
  executionId: string;
}): { item: TriggerItem; blobs: NewBlobRow[] } {
  const { mode, req, parsed, executionId } = call;
  const receivedAt = isoString(req.receivedAt);
  const blobs: NewBlobRow[] = parsed.files.map((f) => ({
    id: newId(),
    execution_id: executionId,
    sha256: f.sha256,
    size: f.size,
    mime_type: f.mimeType,
    filename: f.filename,
    data: f.data,
    created_at: receivedAt,
  }));
  const path = trimSlashes(req.path);
  const item: TriggerItem = {
    method: req.method,
    path,
    params: call.params,
    query: call.query,
    headers: itemHeaders(req.headers, call.auth.maskedHeaders),
    body: parsed.body,
    files: parsed.files.map((f, i) => ({
      id: blobs[i]!.id,
      field: f.field,
      filename: f.filename,
      mimeType: f.mimeType,
      size: f.size,
      sha256: f.sha256,
    })),
    webhookUrl: `${call.baseUrl}/${mode === 'test' ? 'webhook-test' : 'webhook'}/${path}`,
    executionMode: mode,
    receivedAt,
  };
  // Set last, so `auth` follows `receivedAt` in the stored JSON. (No `...spread` of an empty object.)
  if (call.auth.claims) item.auth = { claims: call.auth.claims };
  return { item, blobs };
}

export function header(req: Pick<InboundRequest, 'headers'>, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Headers as the item keeps them: credentials masked, hookflow's own session cookie dropped. */
function itemHeaders(
  headers: InboundRequest['headers'],
  masked: string[],
): Record<string, string | string[]> {
  // Most calls have nothing to hide: Node's own header object is kept as is (no copy).
  const cookie = headers.cookie;
  if (masked.length === 0 && !(typeof cookie === 'string' && cookie.includes(SESSION_COOKIE)))
    return headers as Record<string, string | string[]>;
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (masked.includes(name)) out[name] = MASK;
    else if (name === 'cookie' && typeof value === 'string' && value.includes(SESSION_COOKIE)) {
      const kept = value
        .split(';')
        .filter((c) => c.trim().split('=')[0] !== SESSION_COOKIE)
        .join(';')
        .trim();
      if (kept) out[name] = kept;
    } else out[name] = value;
  }
  return out;
}
