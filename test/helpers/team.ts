/**
 * A team on a test server (SPEC 11b): the owner made with the setup code, then an admin, an
 * editor and a viewer invited and signed in through their invite links. Each member calls the API
 * with their session cookie (and CSRF token on writes), as the UI does.
 */
import type { Role } from '../../src/shared/roles.js';
import type { ApiResponse, TestServer } from './server.js';

export interface Session {
  id: string;
  email: string;
  role: Role;
  cookie: string;
  csrf: string;
}

export interface Team {
  members: Record<Role, Session>;
  /** fetch as a member (cookie + CSRF token), JSON in and out. */
  as(role: Role | Session, method: string, route: string, body?: unknown): Promise<ApiResponse>;
  /** Invite `email` as `role` (by the owner) and accept; the new member's session. */
  join(email: string, role: Exclude<Role, 'owner'>): Promise<Session>;
}

export const PASSWORD = 'correct horse battery';

export async function call(
  server: TestServer,
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
}

const sessionOf = (res: ApiResponse): Session => {
  if (res.status !== 201 && res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return {
    ...res.body.user,
    cookie: res.headers.get('set-cookie')!.split(';')[0]!,
    csrf: res.body.csrfToken,
  };
};

export async function makeTeam(server: TestServer): Promise<Team> {
  const owner = sessionOf(
    await call(server, 'POST', '/api/v1/auth/setup', {
      email: 'owner@example.com',
      password: PASSWORD,
      setupCode: server.setupCode,
    }),
  );
  const as: Team['as'] = (who, method, route, body) => {
    const s = typeof who === 'string' ? members[who] : who;
    return call(server, method, route, body, { cookie: s.cookie, 'x-csrf-token': s.csrf });
  };
  const join: Team['join'] = async (email, role) => {
    const invited = await as(owner, 'POST', '/api/v1/members/invitations', { email, role });
    if (invited.status !== 201) throw new Error(`invite: ${invited.status} ${JSON.stringify(invited.body)}`);
    const token = new URL(invited.body.inviteUrl).pathname.split('/').at(-1);
    return sessionOf(
      await call(server, 'POST', '/api/v1/members/invitations/accept', { token, password: PASSWORD }),
    );
  };
  const members = { owner } as Record<Role, Session>;
  members.admin = await join('admin@example.com', 'admin');
  members.editor = await join('editor@example.com', 'editor');
  members.viewer = await join('viewer@example.com', 'viewer');
  return { members, as, join };
}
