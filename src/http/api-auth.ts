/**
 * Authentication of the management API (and `/metrics`): `Authorization: Bearer <API_TOKEN>`
 * (scripts), or the UI's session cookie. A cookie is sent by the browser on its own, so every
 * cookie-authenticated write must also carry the session's CSRF token in `X-CSRF-Token` (a header
 * another site cannot set).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { type Accounts, SESSION_COOKIE } from '../accounts/accounts.js';
import { AppError } from '../errors.js';
import type { Role } from '../shared/roles.js';
import type { TokenService } from '../tokens/tokens.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Who made an authenticated API call, and the role it acts with (SPEC 11b). */
export interface Principal {
  /** As the version history shows it (`savedBy`): `token "<name>"`, or the account's email. */
  name: string;
  /** The member; null for the owner's CLI tokens (and HOOKFLOW_METRICS_TOKEN). */
  memberId: string | null;
  role: Role;
  /** The API token used, if any. */
  tokenId?: string;
  tokenName?: string;
}

const principals = new WeakMap<FastifyRequest, Principal>();

/** Who is calling (see Principal); undefined outside the authenticated API. */
export function principalOf(request: FastifyRequest): Principal | undefined {
  return principals.get(request);
}

/** Who is calling, as the version history shows it (`savedBy`). */
export function actorOf(request: FastifyRequest): string | undefined {
  return principals.get(request)?.name;
}

export function apiAuth(tokens: TokenService, accounts: Accounts) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const verified = match ? await tokens.verify(match[1]!) : undefined;
      if (verified) {
        const { apiToken, role } = verified;
        principals.set(request, {
          name: `token "${apiToken.name}"`,
          memberId: apiToken.memberId,
          role,
          tokenId: apiToken.id,
          tokenName: apiToken.name,
        });
        return;
      }
      throw new AppError('unauthorized', 'The API token is unknown or was revoked.', {
        hint: 'Send Authorization: Bearer <API_TOKEN>; create a token with `hookflow tokens create --name <name>`.',
        headers: { 'www-authenticate': 'Bearer realm="hookflow api", error="invalid_token"' },
      });
    }
    const session = await accounts.session(request.cookies[SESSION_COOKIE]);
    if (!session) {
      throw new AppError('unauthorized', 'This API needs an API token.', {
        hint: 'Send Authorization: Bearer <API_TOKEN>; create a token with `hookflow tokens create --name <name>`.',
        headers: { 'www-authenticate': 'Bearer realm="hookflow api"' },
      });
    }
    if (!SAFE_METHODS.has(request.method) && !sameToken(request.headers['x-csrf-token'], session.csrfToken)) {
      throw new AppError('csrf_failed', 'This request is missing the CSRF token of your session.', {
        hint: 'Reload the page and try again; scripts should use an API token instead of the session cookie.',
      });
    }
    principals.set(request, { name: session.user.email, memberId: session.user.id, role: session.user.role });
  };
}

/**
 * `/metrics` (SPEC 8): `HOOKFLOW_METRICS_TOKEN` as a bearer token (Prometheus' `authorization`
 * setting), or whatever the API takes — an API token of any role, or a signed-in session. It shows
 * traffic by status, refusals, memory and the Node version: not for strangers.
 */
export function metricsAuth(tokens: TokenService, accounts: Accounts, metricsToken: string | undefined) {
  const api = apiAuth(tokens, accounts);
  return async (request: FastifyRequest): Promise<void> => {
    if (metricsToken !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
      if (match && sameToken(match[1], metricsToken)) {
        principals.set(request, { name: 'metrics token', memberId: null, role: 'viewer' });
        return;
      }
    }
    await api(request);
  };
}

function sameToken(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
