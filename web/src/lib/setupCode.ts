/**
 * The first start's setup code (SPEC 11) from the address hookflow prints:
 * `{base_url}/#setup-code=<code>`. In the fragment, so the browser never sends it to a server or
 * in a Referer; taken out of the address bar as soon as the UI sees it (on load, or when the
 * address of an open page is changed to it), so it does not stay in the history or a bookmark.
 */
import { useEffect } from 'react';

/** The code in a location hash (`#setup-code=…`, other `&`-separated entries ignored), or ''. */
export function setupCodeOf(hash: string): string {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  return (params.get('setup-code') ?? '').trim();
}

let latest = '';
const listeners = new Set<(code: string) => void>();

/**
 * The code of the address, taken out of the address bar (and told to `useSetupCodeChanges`);
 * when the address has none, the last one taken (so React's second render in StrictMode gets the
 * same value), or ''.
 */
export function takeSetupCode(): string {
  const code = setupCodeOf(window.location.hash);
  if (code !== '') {
    latest = code;
    const { pathname, search } = window.location;
    window.history.replaceState(window.history.state, '', `${pathname}${search}`);
    for (const listener of listeners) listener(code);
  }
  return latest;
}

// Pasting the printed address into a tab that already shows the UI changes only the fragment: no
// reload, a hashchange. Registered at load, like the router's popstate listener (not in a test
// without a window).
if (typeof window !== 'undefined') window.addEventListener('hashchange', () => takeSetupCode());

/** Calls `onCode` with each code the address of the open page is changed to. */
export function useSetupCodeChanges(onCode: (code: string) => void): void {
  useEffect(() => {
    listeners.add(onCode);
    return () => {
      listeners.delete(onCode);
    };
  }, [onCode]);
}
