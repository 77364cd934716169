/**
 * A test event named by what tells it apart from the others (a push from a pull request, a
 * `payment_intent.succeeded` from an `invoice.paid`): the sender's event header, else a top-level
 * `type`/`event`, with the body's `action` beside it, then its size and time — not just its time
 * and method, which every call from one sender shares.
 */
import type { TriggerItem } from '../types';

/** Headers senders name the event in (GitHub, GitLab, Bitbucket, Shopify, generic), first match wins. */
export const EVENT_HEADERS = [
  'x-github-event',
  'x-gitlab-event',
  'x-event-key',
  'x-shopify-topic',
  'x-event-type',
];

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 60) : undefined;

function header(item: TriggerItem, name: string): string | undefined {
  for (const [k, v] of Object.entries(item.headers ?? {}))
    if (k.toLowerCase() === name) return text(Array.isArray(v) ? v[0] : v);
  return undefined;
}

/** "pull_request opened", "payment_intent.succeeded", "push"; undefined when nothing names it. */
export function eventName(item: TriggerItem): string | undefined {
  const body =
    typeof item.body === 'object' && item.body !== null && !Array.isArray(item.body)
      ? (item.body as Record<string, unknown>)
      : {};
  const kind = EVENT_HEADERS.map((h) => header(item, h)).find(Boolean) ?? text(body.type) ?? text(body.event);
  const action = text(body.action);
  if (kind && action) return `${kind} ${action}`;
  return kind ?? action;
}

/** The body's size: its Content-Length, else the length of its JSON (as the body was captured). */
export function bodySize(item: TriggerItem): number {
  const declared = header(item, 'content-length');
  if (declared !== undefined && /^\d+$/.test(declared)) return Number(declared);
  if (item.body === undefined || item.body === null || item.body === '') return 0;
  const raw = typeof item.body === 'string' ? item.body : JSON.stringify(item.body);
  return new TextEncoder().encode(raw).length;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** "pull_request opened · 12 KB · 12:43:24" (or "POST · 120 B · …" when nothing names the event). */
export function testEventLabel(item: TriggerItem, time: string): string {
  const name = eventName(item) ?? item.method ?? 'request';
  return `${name} · ${formatBytes(bodySize(item))} · ${time}`;
}
