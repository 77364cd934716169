/** A few lines of client-side routing: the URL path is the state; links push history entries. */
import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from 'react';
import { withBase, withoutBase } from './base';

const CHANGE = 'hookflow:navigate';

function subscribe(callback: () => void): () => void {
  window.addEventListener('popstate', callback);
  window.addEventListener(CHANGE, callback);
  return () => {
    window.removeEventListener('popstate', callback);
    window.removeEventListener(CHANGE, callback);
  };
}

/** Paths in the UI are its own ('/workflows/…'); the browser's carry the base path in front. */
const snapshot = () => withoutBase(window.location.pathname) + window.location.search;

/** The current path and query, re-rendering on navigation. */
export function useLocation(): string {
  return useSyncExternalStore(subscribe, snapshot);
}

/**
 * Asked before any in-app navigation (links, navigate(), sign out): the editor registers one while
 * it has unsaved changes. It returns true when it takes over (shows its dialog) and will call
 * `proceed` itself if the user chooses to leave. One guard at a time: only one page is mounted.
 */
export type LeaveGuard = (proceed: () => void) => boolean;
let guard: LeaveGuard | undefined;

/** Register the guard; the returned function removes it (if it is still the registered one). */
export function setLeaveGuard(next: LeaveGuard): () => void {
  guard = next;
  return () => {
    if (guard === next) guard = undefined;
  };
}

/** Run `action` (something that leaves the page) unless the guard takes over; it then decides. */
export function leave(action: () => void): void {
  if (guard?.(action)) return;
  action();
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === snapshot()) return;
  leave(() => go(to, options));
}

/** The path on screen: where Back/Forward is undone to when the guard holds it. */
let shown = snapshot();

// Back/Forward has already changed the URL when popstate comes, so a held one is undone by putting
// the shown path back, and leaving goes to its target as a new entry. Registered at load, before
// React subscribes, so stopping the event keeps the page from switching.
window.addEventListener('popstate', (event) => {
  const target = snapshot();
  if (target !== shown && guard?.(() => go(target, {}))) {
    event.stopImmediatePropagation();
    window.history.pushState(null, '', withBase(shown));
    return;
  }
  shown = target;
});

function go(to: string, options: { replace?: boolean }): void {
  shown = to;
  if (options.replace) window.history.replaceState(null, '', withBase(to));
  else window.history.pushState(null, '', withBase(to));
  window.dispatchEvent(new Event(CHANGE));
  if (!options.replace) window.scrollTo(0, 0);
}

/** Match `/workflows/:id` against a path; the params, or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const pattern_ = pattern.split('/');
  const actual = path.split('?')[0]!.split('/');
  if (pattern_.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern_.length; i++) {
    const p = pattern_[i]!;
    const a = actual[i]!;
    if (p.startsWith(':')) {
      if (a === '') return undefined;
      params[p.slice(1)] = decodeURIComponent(a);
    } else if (p !== a) return undefined;
  }
  return params;
}

export function Link({ to, onClick, ...props }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    ) {
      return;
    }
    event.preventDefault();
    navigate(to);
  };
  return <a href={withBase(to)} onClick={handle} {...props} />;
}
