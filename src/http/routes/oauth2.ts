/**
 * OAuth2 credentials' connection (SPEC 7e): `POST /api/v1/credentials/:id/oauth2/authorize` gives
 * the provider's page to open; the provider sends the browser back to `/oauth2/callback`, a public
 * page (no API token: the `state` it carries is the only key to the authorization in progress),
 * which stores the tokens and says so in a sentence, or says what to do instead.
 */
import { AuthorizeSchema } from '../../credentials/model.js';
import type { CallbackOutcome } from '../../credentials/oauth2.js';
import type { App, HttpDeps } from '../deps.js';
import { auditContext } from '../audit-context.js';
import { clientIp } from '../client-ip.js';
import { errors, IdParams, routeSchema } from '../schemas.js';

export function oauth2AuthorizeRoute(app: App, { oauth2, config }: HttpDeps): void {
  const auditOf = auditContext(config.http);
  app.post(
    '/credentials/:id/oauth2/authorize',
    {
      schema: routeSchema(['credentials'], {
        summary:
          'Start connecting an oauth2 credential (authorization_code grant, PKCE S256): open authorizeUrl in a browser; the provider sends it back to {base_url}/oauth2/callback, which stores the tokens. Valid for 10 minutes, once.',
        params: IdParams,
        response: { 200: AuthorizeSchema, ...errors(400, 401, 404) },
      }),
    },
    async (req) => oauth2.authorize(req.params.id, auditOf(req)),
  );
}

/** The page the provider sends the person's browser back to. */
export function oauth2CallbackRoute(app: App, { oauth2, config }: HttpDeps): void {
  const ipOf = clientIp(config.http.trustProxy);
  const credentialsPage = `${config.http.basePath}/credentials`;
  app.get('/oauth2/callback', { schema: { hide: true } }, async (req, reply) => {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
      if (typeof v === 'string' && k !== '__proto__') query[k] = v;
    const outcome = await oauth2.callback(query, ipOf(req.raw));
    reply.headers(PAGE_HEADERS);
    return reply
      .code(outcome.ok ? 200 : outcome.status)
      .type('text/html; charset=utf-8')
      .send(page(outcome, credentialsPage));
  });
}

/** A page of its own: no script, nothing loaded, not framed, not cached (the URL held a code). */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

function page(outcome: CallbackOutcome, credentialsPage: string): string {
  const title = outcome.ok ? 'Connected — you can close this tab' : outcome.title;
  const text = outcome.ok
    ? `hookflow now holds the tokens of “${outcome.credential}”; its workflows can use it.`
    : outcome.message;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · hookflow</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}h1{font-size:1.4rem}a{color:#0b57d0}</style>
</head><body><main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>
<p><a href="${escapeHtml(credentialsPage)}">Back to Credentials</a></p>
</main></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}
