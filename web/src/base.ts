/**
 * Where the UI lives: '' at the root of its host, '/hookflow' behind a proxy that serves hookflow
 * under that path. The server names it in every page's `<base href>` (src/http/routes/ui.ts, from
 * HOOKFLOW_BASE_URL); the Vite dev server's page has none, which is the root (and so is a test
 * without a document).
 */
import { withoutBasePath } from '../../src/shared/base-path';

export const BASE = basePath(
  typeof document === 'undefined' ? '/' : (document.querySelector('base')?.getAttribute('href') ?? '/'),
);

export function basePath(href: string): string {
  return href.replace(/\/+$/, '');
}

/** A path of hookflow's (`/api/v1/…`, `/workflows/…`) as the browser must ask for it. */
export function withBase(path: string): string {
  return `${BASE}${path}`;
}

/** The browser's path without the base, as the UI's routes see it (the server's own rule). */
export function withoutBase(pathname: string, base = BASE): string {
  return withoutBasePath(pathname, base);
}
