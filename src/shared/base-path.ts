/**
 * hookflow under a path behind a proxy (HOOKFLOW_BASE_URL=https://example.com/hookflow): the one
 * rule for taking that path off a URL, used by the server on every request and by the UI on its own
 * location (web/src/base.ts). No imports, so the browser build can take it as it is.
 */

/**
 * `url` (a path, with or without a query) without `basePath` in front: requests arrive with it when
 * the proxy passes it on and without it when the proxy strips it, and both are served as the same
 * routes. A URL not under the base path is returned as it is. (No route of hookflow's own starts
 * with the base path: config.ts refuses one that would.)
 */
export function withoutBasePath(url: string, basePath: string): string {
  if (!url.startsWith(basePath)) return url;
  const next = url.charCodeAt(basePath.length);
  if (Number.isNaN(next)) return '/';
  if (next === 0x2f /* / */) return url.slice(basePath.length);
  if (next === 0x3f /* ? */) return `/${url.slice(basePath.length)}`;
  return url;
}
