/** A step's retry as the form edits it (SPEC 7c `http`, 7e `email`). */

/** Attempts ('' for one, no retry), the first pause, and which failures retry. */
export interface RetryDraft {
  retryAttempts: string;
  retryBackoffMs: string;
  retryOn: string[];
  /** The stored retry named `on` (so an explicit list of every kind is kept as written). */
  retryOnSet: boolean;
}

/** A stored retry as form fields; `all`: what `on` lists while the stored retry names none. */
export function retryDraftFrom(retry: unknown, all: readonly string[]): RetryDraft {
  const r =
    typeof retry === 'object' && retry !== null && !Array.isArray(retry)
      ? (retry as Record<string, unknown>)
      : {};
  return {
    retryAttempts: r.attempts === undefined ? '' : String(r.attempts),
    retryBackoffMs: r.backoffMs === undefined ? '' : String(r.backoffMs),
    retryOn: Array.isArray(r.on) ? r.on.map(String) : [...all],
    retryOnSet: Array.isArray(r.on),
  };
}
