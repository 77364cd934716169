/**
 * Roles on every route (SPEC 11b): walks every route of the OpenAPI document with every role and
 * checks the answer against the one table (src/http/permissions.ts): allowed → never 403 forbidden
 * and never a 5xx; not allowed → 403 forbidden naming the role needed. A route missing from the
 * table fails here (and stops the server from starting). Unknown ids are used on purpose: the
 * role is checked before anything is looked up, so nothing is changed and every answer is cheap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { neededFor, PERMISSIONS } from '../../src/http/permissions.js';
import { atLeast, ROLES } from '../../src/shared/roles.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';
import { call, makeTeam, type Team } from '../helpers/team.js';

let server: TestServer;
let team: Team;
let routes: { method: string; path: string; key: string }[];

beforeAll(async () => {
  server = await startTestServer();
  team = await makeTeam(server);
  const doc = await call(server, 'GET', '/api/v1/openapi.json');
  routes = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
    Object.keys(ops).map((m) => {
      const method = m.toUpperCase();
      return { method, path, key: `${method} ${path.replace(/\{(\w+)\}/g, ':$1')}` };
    }),
  );
});
afterAll(() => server.close());

const UNKNOWN_ID = '01900000-0000-7000-8000-000000000000';
const fill = (path: string) => path.replace('{version}', '1').replace(/\{\w+\}/g, UNKNOWN_ID);

/** One call; an event stream is read up to its headers, then dropped. */
async function callRoute(method: string, path: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await fetch(`${server.url}${fill(path)}`, {
    method,
    headers: {
      ...headers,
      ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
    },
    body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
    signal: controller.signal,
  });
  const type = res.headers.get('content-type') ?? '';
  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  const body: any = type.includes('json') ? await res.json() : undefined;
  controller.abort();
  return { status: res.status, body };
}

describe('permissions: every OpenAPI route × every role', () => {
  it('the table and the OpenAPI document name the same routes', () => {
    const documented = routes.map((r) => r.key).sort();
    const missing = documented.filter((k) => PERMISSIONS[k] === undefined);
    expect(missing, 'routes without an entry in src/http/permissions.ts').toEqual([]);
    // Hidden from the document: the document itself.
    const stale = Object.keys(PERMISSIONS).filter(
      (k) => !documented.includes(k) && k !== 'GET /api/v1/openapi.json',
    );
    expect(stale, 'entries of src/http/permissions.ts for routes that do not exist').toEqual([]);
    expect(documented.length).toBeGreaterThan(40);
  });

  it('a route without an entry is refused (server.ts checks every route it registers with neededFor)', () => {
    expect(() => neededFor('GET', '/api/v1/not-in-the-table')).toThrow(/permissions\.ts/);
    expect(neededFor('GET', '/api/v1/workflows')).toBe('viewer');
  });

  it('public routes answer without a token or session (never 401 or 403 forbidden)', async () => {
    for (const { method, path, key } of routes) {
      if (PERMISSIONS[key] !== 'public') continue;
      const res = await callRoute(method, path, {});
      expect(res.status, key).not.toBe(401);
      expect(res.body?.code, key).not.toBe('forbidden');
      expect(res.status, key).toBeLessThan(500);
    }
  });

  it.each(ROLES)(
    '%s: allowed exactly where the table says, else 403 forbidden naming the role',
    async (role) => {
      const me = team.members[role];
      for (const { method, path, key } of routes) {
        const needed = PERMISSIONS[key]!;
        // Signing out would end the session the walk uses; public routes are checked above.
        if (needed === 'public') continue;
        const res = await callRoute(method, path, { cookie: me.cookie, 'x-csrf-token': me.csrf });
        expect(res.status, `${role} ${key}`).toBeLessThan(500);
        if (atLeast(role, needed)) {
          expect(res.body?.code, `${role} ${key}`).not.toBe('forbidden');
          expect(res.status, `${role} ${key}`).not.toBe(401);
        } else {
          expect(res.status, `${role} ${key}`).toBe(403);
          expect(res.body.code, `${role} ${key}`).toBe('forbidden');
          expect(`${res.body.message} ${res.body.hint}`, `${role} ${key}`).toContain(needed);
        }
      }
    },
  );

  it('an API token acts with its role the same way', async () => {
    const made = await team.as('editor', 'POST', '/api/v1/tokens', { name: 'ro', role: 'viewer' });
    expect(made.status).toBe(201);
    expect(made.body.role).toBe('viewer');
    const auth = { authorization: `Bearer ${made.body.token}` };
    const read = await callRoute('GET', '/api/v1/workflows', auth);
    expect(read.status).toBe(200);
    const write = await callRoute('POST', '/api/v1/workflows', auth);
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('forbidden');
    expect(write.body.message).toContain('editor');
  });

  it('event streams are checked like every route: a viewer watches, no one else does', async () => {
    const wf = await createWorkflow(server, {});
    const viewer = team.members.viewer;
    const watched = await callRoute('GET', `/api/v1/workflows/${wf.id}/test-events/stream`, {
      cookie: viewer.cookie,
    });
    expect(watched.status).toBe(200);
    const stranger = await callRoute('GET', `/api/v1/workflows/${wf.id}/test-events/stream`, {});
    expect(stranger.status).toBe(401);
  });

  it('a viewer sees no secret on any route it may read', async () => {
    const HEADER_SECRET = 'header-secret-0123456789';
    const CREDENTIAL_SECRET = 'credential-secret-0123456789';
    const cred = await server.api('POST', '/api/v1/credentials', {
      name: 'api',
      type: 'bearer',
      data: { token: CREDENTIAL_SECRET },
    });
    expect(cred.status).toBe(201);
    const wf = await createActiveWorkflow(server, {
      trigger: {
        type: 'webhook',
        path: 'secret-walk',
        auth: { type: 'header', name: 'x-key', value: HEADER_SECRET },
      },
    });
    const hook = await fetch(`${server.url}/webhook/secret-walk`, {
      method: 'POST',
      headers: { 'x-key': HEADER_SECRET, 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(hook.status).toBeLessThan(300);
    const execution = await eventually(async () => {
      const list = await server.api('GET', `/api/v1/executions?workflowId=${wf.id}`);
      return list.body.items[0];
    });
    const viewer = team.members.viewer;
    let read = 0;
    for (const { method, path, key } of routes) {
      const needed = PERMISSIONS[key]!;
      if (method !== 'GET' || needed === 'public' || !atLeast('viewer', needed) || path.endsWith('/stream'))
        continue;
      const concrete = path
        .replace('{version}', '1')
        .replace(/^\/api\/v1\/workflows\/\{id\}/, `/api/v1/workflows/${wf.id}`)
        .replace(/^\/api\/v1\/executions\/\{id\}/, `/api/v1/executions/${execution.id}`)
        .replace(/\{\w+\}/g, UNKNOWN_ID);
      const res = await fetch(`${server.url}${concrete}`, { headers: { cookie: viewer.cookie } });
      const text = await res.text();
      if (res.status === 200) read++;
      expect(text, key).not.toContain(HEADER_SECRET);
      expect(text, key).not.toContain(CREDENTIAL_SECRET);
    }
    expect(read).toBeGreaterThan(8);
  });
});
