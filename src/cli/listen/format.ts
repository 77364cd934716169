/**
 * `hookflow listen`: how a capture is printed. Everything a capture holds comes from whoever can
 * reach the test URL, so control characters are escaped before they reach the terminal.
 */

/** The trigger item as stored with a test event (src/webhooks/receive.ts TriggerItem), as far as we read it. */
export interface CapturedItem {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  headers?: Record<string, string | string[]>;
  body?: unknown;
  files?: { field: string; filename: string; mimeType: string; size: number }[];
  webhookUrl?: string;
  receivedAt?: string;
}

export interface CaptureEvent {
  id: string;
  executionId: string | null;
  receivedAt: string;
  item: CapturedItem;
}

// ---------------------------------------------------------------------------------------------------
// Printing a capture

export function formatCapture(event: CaptureEvent): string {
  const { item } = event;
  const at = new Date(event.receivedAt || item.receivedAt || Date.now());
  const time = Number.isNaN(at.getTime()) ? '' : at.toTimeString().slice(0, 8);
  const contentType = headerValue(item.headers, 'content-type');
  const execution = event.executionId ? `  (execution ${oneLine(event.executionId)})` : '';
  const lines = [`\n[${time}] ${oneLine(item.method)} ${oneLine(pathOf(item))}${execution}`];
  if (contentType) lines.push(`content-type: ${oneLine(contentType)}`);
  if (item.query && Object.keys(item.query).length > 0) lines.push(`query: ${pretty(item.query)}`);
  if (!isEmptyObject(item.body))
    lines.push(`body: ${typeof item.body === 'string' ? text(item.body) : pretty(item.body)}`);
  for (const f of item.files ?? [])
    lines.push(
      `file: ${oneLine(f.field)} → ${oneLine(f.filename)} (${oneLine(f.mimeType)}, ${Number(f.size)} bytes)`,
    );
  return `${lines.join('\n')}\n`;
}

/*
 * Whatever a capture holds comes from anyone who can reach the test URL. Printed raw, ESC (C0) or
 * CSI (C1, U+009B) sequences in it would drive the developer's terminal: colours, cursor moves,
 * erasing lines, window titles, on some terminals clipboard writes (OSC 52). So control characters
 * in captured data are printed escaped, C0 and DEL as \x1b, C1 as \u009b. JSON.stringify escapes C0
 * already but leaves DEL and C1 as they are.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above, with tab and newline too
const CONTROL_IN_LINE = /[\u0000-\u001f\u007f-\u009f]/g;

const escapeControl = (c: string): string => {
  const code = c.charCodeAt(0);
  return code >= 0x80
    ? `\\u${code.toString(16).padStart(4, '0')}`
    : `\\x${code.toString(16).padStart(2, '0')}`;
};

/** A captured text printed as text: its newlines and tabs kept, every other control escaped. */
export const text = (value: string): string => value.replace(CONTROL_IN_TEXT, escapeControl);

/** A captured value printed inside one line (method, path, header, file name): newlines escaped too. */
export const oneLine = (value: unknown): string => String(value).replace(CONTROL_IN_LINE, escapeControl);

function pathOf(item: CapturedItem): string {
  if (item.webhookUrl) {
    try {
      return new URL(item.webhookUrl).pathname;
    } catch {
      // not a URL: fall back to the bare path
    }
  }
  return `/${item.path}`;
}

// The layout's newlines are JSON's own; those inside strings are escaped by JSON.stringify.
const pretty = (value: unknown): string => text(JSON.stringify(value, null, 2) ?? String(value));

export function headerValue(headers: CapturedItem['headers'], name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

export function isEmptyObject(v: unknown): boolean {
  return (
    v === undefined ||
    (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
  );
}

/** m:ss */
export function clock(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const truncate = (s: string, n: number) =>
  s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s;
