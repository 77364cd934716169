/**
 * Who may call what (SPEC 11b): every API route and the role it needs, in one table. The API's
 * onRequest hook (server.ts) checks it after authentication; a route registered behind the API
 * token without an entry here stops the server from starting, and test/http/permissions.int.test.ts
 * walks every route of the OpenAPI document with every role against it.
 *
 * `public`: no token or session (sign-in, setup, accepting an invitation, probes). `viewer`: any
 * role (reads; GET /metrics, which SPEC 8 opens to a token of any role).
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { atLeast, type Role } from '../shared/roles.js';
import { principalOf } from './api-auth.js';

export type Needed = Role | 'public';

const API = '/api/v1';

export const PERMISSIONS: Readonly<Record<string, Needed>> = {
  // Accounts: signing in and out, and the invite page, need no role yet.
  [`GET ${API}/auth/status`]: 'public',
  [`POST ${API}/auth/setup`]: 'public',
  [`POST ${API}/auth/login`]: 'public',
  [`POST ${API}/auth/logout`]: 'public',
  [`POST ${API}/members/invitations/accept`]: 'public',
  [`GET ${API}/openapi.json`]: 'public',
  // Probes and metrics.
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  [`GET ${API}/healthz`]: 'public',
  [`GET ${API}/readyz`]: 'public',
  'GET /metrics': 'viewer',
  [`GET ${API}/metrics`]: 'viewer',

  // Workflows: viewers read, editors change.
  [`GET ${API}/workflows`]: 'viewer',
  [`GET ${API}/workflows/:id`]: 'viewer',
  [`GET ${API}/workflows/:id/versions`]: 'viewer',
  [`GET ${API}/workflows/:id/versions/:version`]: 'viewer',
  [`GET ${API}/workflows/:id/rejections`]: 'viewer',
  [`GET ${API}/workflows/:id/health`]: 'viewer',
  [`GET ${API}/workflows/:id/tests`]: 'viewer',
  [`GET ${API}/workflows/:id/tests/:testId`]: 'viewer',
  [`POST ${API}/workflows/:id/tests`]: 'editor',
  [`PUT ${API}/workflows/:id/tests/:testId`]: 'editor',
  [`DELETE ${API}/workflows/:id/tests/:testId`]: 'editor',
  [`POST ${API}/workflows/:id/tests/run`]: 'editor',
  [`GET ${API}/workflows/:id/schema`]: 'viewer',
  [`POST ${API}/workflows`]: 'editor',
  [`PUT ${API}/workflows/:id`]: 'editor',
  [`PATCH ${API}/workflows/:id`]: 'editor',
  [`DELETE ${API}/workflows/:id`]: 'editor',
  [`POST ${API}/workflows/:id/versions/:version/restore`]: 'editor',
  [`POST ${API}/workflows/:id/activate`]: 'editor',
  [`POST ${API}/workflows/:id/deactivate`]: 'editor',
  [`POST ${API}/workflows/:id/publish`]: 'editor',
  [`POST ${API}/workflows/:id/run`]: 'editor',

  // Tests: viewers watch what was captured (headers' credentials are masked); editors listen.
  [`GET ${API}/workflows/:id/test-listener`]: 'viewer',
  [`GET ${API}/workflows/:id/test-events`]: 'viewer',
  [`GET ${API}/workflows/:id/test-events/stream`]: 'viewer',
  [`POST ${API}/workflows/:id/test-listener`]: 'editor',
  [`DELETE ${API}/workflows/:id/test-listener`]: 'editor',

  // Executions: viewers read them and their files; editors run them again.
  [`GET ${API}/executions`]: 'viewer',
  [`GET ${API}/executions/:id`]: 'viewer',
  [`GET ${API}/executions/backlog`]: 'viewer',
  [`GET ${API}/files/:id`]: 'viewer',
  [`POST ${API}/executions/:id/retry`]: 'editor',
  [`POST ${API}/executions/:id/replay`]: 'editor',

  // Credentials are the editors' (SPEC 11b names them in the editor's rights, not the viewer's).
  [`GET ${API}/credentials`]: 'editor',
  [`GET ${API}/credentials/:id`]: 'editor',
  [`POST ${API}/credentials`]: 'editor',
  [`PATCH ${API}/credentials/:id`]: 'editor',
  [`DELETE ${API}/credentials/:id`]: 'editor',
  [`POST ${API}/credentials/:id/oauth2/authorize`]: 'editor',

  // The data store: the editors' (SPEC 11b names it in the editor's rights; a viewer reads
  // workflows and executions only). Reading too: entries are business data (order ids, cursors).
  [`GET ${API}/store`]: 'editor',
  [`GET ${API}/store/:scope/:key`]: 'editor',
  [`PUT ${API}/store/:scope/:key`]: 'editor',
  [`DELETE ${API}/store/:scope/:key`]: 'editor',

  // Variables (SPEC 7e): the editors' (SPEC 11b names them in the editor's rights; a viewer reads
  // workflows and executions only). A secret's value is "***" for everyone.
  [`GET ${API}/variables`]: 'editor',
  [`GET ${API}/variables/:name`]: 'editor',
  [`PUT ${API}/variables/:name`]: 'editor',
  [`DELETE ${API}/variables/:name`]: 'editor',

  // API tokens: everyone lists their own (admins all); editors make and revoke their own
  // (admins anyone's: routes/tokens.ts).
  [`GET ${API}/tokens`]: 'viewer',
  [`POST ${API}/tokens`]: 'editor',
  [`DELETE ${API}/tokens/:id`]: 'editor',

  // Members: admins; only the owner hands ownership on.
  [`GET ${API}/members`]: 'admin',
  [`PATCH ${API}/members/:id`]: 'admin',
  [`DELETE ${API}/members/:id`]: 'admin',
  [`GET ${API}/members/invitations`]: 'admin',
  [`POST ${API}/members/invitations`]: 'admin',
  [`DELETE ${API}/members/invitations/:id`]: 'admin',
  [`POST ${API}/members/:id/transfer-ownership`]: 'owner',
  // The audit log: admins and the owner.
  [`GET ${API}/audit`]: 'admin',
};

export const routeKey = (method: string, url: string) => `${method} ${url}`;

/** Routes the table must cover: the API and the probes (not the UI's pages or the docs page). */
export const COVERED = /^\/(api\/v1\/|healthz$|readyz$|metrics$)/;

/** What a route needs; throws at registration when it has no entry (see the top of this file). */
export function neededFor(method: string, url: string): Needed {
  const needed = PERMISSIONS[routeKey(method, url)];
  if (needed === undefined) {
    throw new Error(`${method} ${url} has no entry in src/http/permissions.ts: say which role it needs.`);
  }
  return needed;
}

/** 403 forbidden naming the role a call needs. */
export function forbidden(role: Role, needed: Role, what: string): AppError {
  return new AppError('forbidden', `${what} needs the ${needed} role; you act as ${role}.`, {
    hint: `Ask an owner or admin for the ${needed} role (or a higher one)${needed === 'owner' ? ', or ask the owner to do it' : ''}.`,
  });
}

/** The check of the API's onRequest hook, after authentication. */
export async function checkPermission(request: FastifyRequest): Promise<void> {
  const principal = principalOf(request);
  const url = request.routeOptions.url ?? '';
  const needed = neededFor(request.method === 'HEAD' ? 'GET' : request.method, url);
  if (needed === 'public') return;
  if (principal === undefined) {
    throw new AppError('unauthorized', 'This API needs an API token.', {
      hint: 'Send Authorization: Bearer <API_TOKEN>.',
    });
  }
  if (!atLeast(principal.role, needed)) {
    throw forbidden(principal.role, needed, `${request.method} ${url}`);
  }
}

/** Throws 403 unless the caller acts with at least `needed` (checks inside a route). */
export function requireRole(request: FastifyRequest, needed: Role, what: string): void {
  const principal = principalOf(request);
  if (principal && !atLeast(principal.role, needed)) throw forbidden(principal.role, needed, what);
}
