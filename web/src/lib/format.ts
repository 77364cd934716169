/** Times, durations and values as people read them. */

/** A date and time to the second, in the reader's locale. */
export const DATE_TIME: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
};

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay
    ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })
    : date.toLocaleString(undefined, DATE_TIME);
}

/** "3 s ago", "5 min ago" … for recent times; the date otherwise. */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const ms = now - new Date(iso).getTime();
  if (Number.isNaN(ms)) return iso;
  if (ms < 5_000) return 'just now';
  // Rounded, but never up into the next unit ("60 s ago" is "1 min ago", said by the next branch).
  if (ms < 60_000) return `${Math.min(59, Math.round(ms / 1000))} s ago`;
  if (ms < 3_600_000) return `${Math.min(59, Math.round(ms / 60_000))} min ago`;
  if (ms < 86_400_000) return `${Math.min(23, Math.round(ms / 3_600_000))} h ago`;
  return formatTime(iso);
}

export function formatDuration(from: string | null | undefined, to: string | null | undefined): string {
  if (!from || !to) return '—';
  const ms = new Date(to).getTime() - new Date(from).getTime();
  if (Number.isNaN(ms) || ms < 0) return '—';
  if (ms < 1000) return `${ms} ms`;
  // Each unit decided on the rounded value, so 59 999 ms is "1 min 0 s", not "60.0 s" or "0 min 60 s".
  const centis = Math.round(ms / 10) / 100;
  if (centis < 10) return `${centis.toFixed(2)} s`;
  const tenths = Math.round(ms / 100) / 10;
  if (tenths < 60) return `${tenths.toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function pretty(value: unknown): string {
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, null, 2);
}

/** One line, cut to `max` characters. */
export function short(value: unknown, max = 80): string {
  const text =
    typeof value === 'string' ? JSON.stringify(value) : value === undefined ? '—' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}
