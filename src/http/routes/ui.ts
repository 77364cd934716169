/**
 * The web UI (web/, built by Vite into dist/web) served by the same process at `/`: built files as
 * they are, and index.html for every other page a browser navigates to (the UI routes on the client).
 * API, docs and webhook URLs never get the page: a GET there that no route took keeps the JSON 404.
 *
 * Caching: files under /assets/ carry a content hash in their name, so they are immutable for a year;
 * index.html is revalidated on every load, so a new build is picked up at once.
 *
 * Compression: the build writes `.br` and `.gz` beside each script and style (web/vite.config.ts),
 * sent as they are to browsers that accept them (the 390 kB bundle goes as ~100 kB of brotli).
 * Source maps are not built; a `.map` that is there anyway (a dev build copied over) is not served.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { App, HttpDeps } from '../deps.js';
import { sendError } from '../error-handler.js';

/** Same place from src/http/routes (tests) and dist/http/routes (built). */
export const WEB_ROOT = path.resolve(import.meta.dirname, '../../../dist/web');

/** Paths that belong to the API, its docs or the webhooks: never answered with the UI page. */
const NOT_A_PAGE = /^\/(api|webhook|webhook-test|webhook-resume)(\/|$)/;
const HASHED_ASSET = /^\/assets\//;
const SOURCE_MAP = /\.map$/i;
/** Files the build precompresses: their answer depends on Accept-Encoding. */
const COMPRESSIBLE = /\.(js|css|svg|json)$/i;

/**
 * The page loads only its own scripts and styles; nothing may frame it (clickjacking of the
 * activate and delete buttons). No inline scripts: Vite's build emits none.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

export function uiRoutes(app: App, { config }: HttpDeps): void {
  // Every page names where the UI lives: its files are linked relative to that (the build's base
  // is './'), and the client's links and API calls start there (web/src/base.ts).
  const baseTag = `<base href="${escapeAttribute(`${config.http.basePath}/`)}">`;
  app.register(async (scope) => {
    // serve: false — this file decides what is a file and what is a page; the plugin sends files
    // (ranges, ETag, 304, no path traversal).
    await scope.register(fastifyStatic, {
      root: WEB_ROOT,
      serve: false,
      cacheControl: false,
      preCompressed: true,
    });

    scope.get('/*', { schema: { hide: true } }, async (req, reply) => {
      const urlPath = decodePath(req.url);
      if (urlPath === undefined || NOT_A_PAGE.test(urlPath)) return reply.callNotFound();

      const file = urlPath === '/' || SOURCE_MAP.test(urlPath) ? undefined : await builtFile(urlPath);
      if (file) {
        reply.header('x-content-type-options', 'nosniff');
        if (COMPRESSIBLE.test(urlPath)) reply.header('vary', 'accept-encoding');
        reply.header(
          'cache-control',
          HASHED_ASSET.test(urlPath) ? 'public, max-age=31536000, immutable' : 'public, max-age=3600',
        );
        return reply.sendFile(file);
      }
      // No page lives under /assets/, and maps are never served.
      if (HASHED_ASSET.test(urlPath) || SOURCE_MAP.test(urlPath)) return reply.callNotFound();
      // Anything else a browser navigates to is a page of the UI; other clients get the JSON 404.
      if (urlPath !== '/' && !acceptsHtml(req)) return reply.callNotFound();
      if (!(await builtFile('/index.html'))) return notBuilt(req, reply, config.http.basePath);
      const page = await fs.readFile(path.join(WEB_ROOT, 'index.html'), 'utf8');
      reply.headers(PAGE_HEADERS);
      reply.header('cache-control', 'no-cache');
      return reply.type('text/html; charset=utf-8').send(page.replace('<head>', `<head>${baseTag}`));
    });
  });
}

function decodePath(url: string): string | undefined {
  const raw = url.split('?')[0]!;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** The file under WEB_ROOT that `urlPath` names, relative to it; undefined for anything else. */
async function builtFile(urlPath: string): Promise<string | undefined> {
  const relative = path.posix.normalize(urlPath).replace(/^\/+/, '');
  if (relative === '' || relative.startsWith('..') || relative.includes('\0')) return undefined;
  const full = path.join(WEB_ROOT, relative);
  if (!full.startsWith(WEB_ROOT + path.sep)) return undefined;
  try {
    return (await fs.stat(full)).isFile() ? relative : undefined;
  } catch {
    return undefined;
  }
}

function acceptsHtml(req: FastifyRequest): boolean {
  return /\btext\/html\b/.test(String(req.headers.accept ?? ''));
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function notBuilt(req: FastifyRequest, reply: FastifyReply, basePath: string) {
  const message = 'The web UI has not been built.';
  const hint = 'Run `npm run build` (it builds the UI into dist/web), then reload this page.';
  if (acceptsHtml(req)) {
    return reply
      .code(503)
      .headers(PAGE_HEADERS)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>hookflow</title></head>` +
          `<body><h1>hookflow</h1><p>${message}</p><p>${hint.replace(/`([^`]+)`/g, '<code>$1</code>')}</p>` +
          `<p>The API (<a href="${escapeAttribute(basePath)}/api/docs">${escapeAttribute(basePath)}/api/docs</a>) and the webhook URLs work without it.</p></body></html>`,
      );
  }
  return sendError(reply, new AppError('not_ready', message, { hint }));
}
