/**
 * Members and invitations (SPEC 11b) over real HTTP, on SQLite and PostgreSQL: invite, accept
 * (one use, 7 days), role changes and removal taking effect at once for sessions and tokens,
 * the owner's protections, ownership transfer, and tokens capped at their member's role.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { call, makeTeam, PASSWORD, type Team } from '../helpers/team.js';

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('members on $dialect', ({ postgres }) => {
  let server: TestServer;
  let team: Team;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
    team = await makeTeam(server);
  });
  afterAll(() => server?.close());

  const accept = (token: string, password = PASSWORD) =>
    call(server, 'POST', '/api/v1/members/invitations/accept', { token, password });
  const tokenOf = (inviteUrl: string) => new URL(inviteUrl).pathname.split('/').at(-1)!;

  it('an invitation is a link under the base URL, listed while pending, usable once', async () => {
    const res = await team.as('admin', 'POST', '/api/v1/members/invitations', {
      email: 'New@Example.com',
      role: 'editor',
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'id', 'inviteUrl']);
    expect(res.body.inviteUrl).toMatch(/^http:\/\/hookflow\.test\/invite\/[A-Za-z0-9_-]{40,}$/);
    const days = (Date.parse(res.body.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const pending = await team.as('admin', 'GET', '/api/v1/members/invitations');
    expect(pending.body.items).toContainEqual(
      expect.objectContaining({ id: res.body.id, email: 'new@example.com', role: 'editor' }),
    );
    // Stored hashed: the token is nowhere in the table.
    const rows = await server.hookflow.store.db.selectFrom('invitations').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(tokenOf(res.body.inviteUrl));

    const joined = await accept(tokenOf(res.body.inviteUrl));
    expect(joined.status).toBe(201);
    expect(joined.body.user).toEqual({ id: expect.any(String), email: 'new@example.com', role: 'editor' });
    expect(joined.body.csrfToken).toEqual(expect.any(String));
    const cookie = joined.headers.get('set-cookie')!.split(';')[0]!;
    const status = await call(server, 'GET', '/api/v1/auth/status', undefined, { cookie });
    expect(status.body.user).toEqual(joined.body.user);

    const again = await accept(tokenOf(res.body.inviteUrl));
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('invitation_not_found');
    const after = await team.as('admin', 'GET', '/api/v1/members/invitations');
    expect(after.body.items.map((i: { id: string }) => i.id)).not.toContain(res.body.id);

    const signIn = await call(server, 'POST', '/api/v1/auth/login', {
      email: 'new@example.com',
      password: PASSWORD,
    });
    expect(signIn.status).toBe(200);
  });

  it('an invited editor edits and publishes; the history names them', async () => {
    const sam = await team.join('sam@example.com', 'editor');
    const created = await team.as(sam, 'POST', '/api/v1/workflows', { name: 'by sam' });
    expect(created.status).toBe(201);
    const saved = await team.as(sam, 'PATCH', `/api/v1/workflows/${created.body.id}`, { name: 'by sam, v2' });
    expect(saved.status).toBe(200);
    const published = await team.as(sam, 'POST', `/api/v1/workflows/${created.body.id}/publish`);
    expect(published.status).toBe(200);
    expect(published.body.publishedVersion).toBe(saved.body.version);
    const history = await team.as('viewer', 'GET', `/api/v1/workflows/${created.body.id}/versions`);
    expect(history.status).toBe(200);
    expect(history.body.items.map((v: { savedBy: string }) => v.savedBy)).toEqual([
      'sam@example.com',
      'sam@example.com',
    ]);
  });

  it('unknown, revoked and expired invitations are 404 invitation_not_found', async () => {
    expect((await accept('nope')).body.code).toBe('invitation_not_found');

    const revoked = await team.as('owner', 'POST', '/api/v1/members/invitations', {
      email: 'revoked@example.com',
      role: 'viewer',
    });
    const del = await team.as('owner', 'DELETE', `/api/v1/members/invitations/${revoked.body.id}`);
    expect(del.status).toBe(204);
    expect((await accept(tokenOf(revoked.body.inviteUrl))).status).toBe(404);

    const expired = await team.as('owner', 'POST', '/api/v1/members/invitations', {
      email: 'late@example.com',
      role: 'viewer',
    });
    await server.hookflow.store.db
      .updateTable('invitations')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', expired.body.id)
      .execute();
    const late = await accept(tokenOf(expired.body.inviteUrl));
    expect(late.status).toBe(404);
    expect(late.body.code).toBe('invitation_not_found');
  });

  it('refuses to invite an existing member or as owner', async () => {
    const member = await team.as('owner', 'POST', '/api/v1/members/invitations', {
      email: 'editor@example.com',
      role: 'viewer',
    });
    expect(member.status).toBe(400);
    expect(member.body.code).toBe('validation_failed');
    const owner = await team.as('owner', 'POST', '/api/v1/members/invitations', {
      email: 'x@example.com',
      role: 'owner',
    });
    expect(owner.status).toBe(400);
  });

  it('lists members with roles, never a password hash', async () => {
    const res = await team.as('admin', 'GET', '/api/v1/members');
    expect(res.status).toBe(200);
    const byEmail = Object.fromEntries(
      res.body.items.map((m: { email: string; role: string }) => [m.email, m.role]),
    );
    expect(byEmail).toMatchObject({
      'owner@example.com': 'owner',
      'admin@example.com': 'admin',
      'editor@example.com': 'editor',
      'viewer@example.com': 'viewer',
    });
    expect(JSON.stringify(res.body)).not.toContain('scrypt');
  });

  it('a role change applies at once to the session and the tokens', async () => {
    const m = await team.join('promoted@example.com', 'editor');
    const made = await team.as(m, 'POST', '/api/v1/tokens', { name: 'ci' });
    expect(made.body.role).toBe('editor');
    const bearer = { authorization: `Bearer ${made.body.token}` };
    expect((await call(server, 'POST', '/api/v1/workflows', { name: 'a' }, bearer)).status).toBe(201);

    const demoted = await team.as('admin', 'PATCH', `/api/v1/members/${m.id}`, { role: 'viewer' });
    expect(demoted.status).toBe(200);
    expect(demoted.body.role).toBe('viewer');
    const bySession = await team.as(m, 'POST', '/api/v1/workflows', { name: 'b' });
    expect(bySession.status).toBe(403);
    expect(bySession.body.code).toBe('forbidden');
    const byToken = await call(server, 'POST', '/api/v1/workflows', { name: 'c' }, bearer);
    expect(byToken.status).toBe(403);
    expect((await call(server, 'GET', '/api/v1/workflows', undefined, bearer)).status).toBe(200);
  });

  it('a token never acts above its member: a higher role at creation is 403 forbidden', async () => {
    const high = await team.as('editor', 'POST', '/api/v1/tokens', { name: 'x', role: 'admin' });
    expect(high.status).toBe(403);
    expect(high.body.code).toBe('forbidden');
    expect(high.body.message).toContain('admin');
    // Editors see and revoke their own tokens only.
    const own = await team.as('editor', 'POST', '/api/v1/tokens', { name: 'mine' });
    const others = await team.as('admin', 'POST', '/api/v1/tokens', { name: 'theirs' });
    const list = await team.as('editor', 'GET', '/api/v1/tokens?limit=200');
    const ids = list.body.items.map((t: { id: string }) => t.id);
    expect(ids).toContain(own.body.id);
    expect(ids).not.toContain(others.body.id);
    expect(list.body.items.every((t: { memberId: string }) => t.memberId === team.members.editor.id)).toBe(
      true,
    );
    const revokeOthers = await team.as('editor', 'DELETE', `/api/v1/tokens/${others.body.id}`);
    expect(revokeOthers.status).toBe(403);
    expect((await team.as('editor', 'DELETE', `/api/v1/tokens/${own.body.id}`)).status).toBe(204);
    expect((await team.as('admin', 'DELETE', `/api/v1/tokens/${others.body.id}`)).status).toBe(204);
  });

  it('removing a member ends their sessions and tokens at once (event streams too)', async () => {
    const m = await team.join('leaver@example.com', 'editor');
    const made = await team.as(m, 'POST', '/api/v1/tokens', { name: 'ci' });
    const bearer = { authorization: `Bearer ${made.body.token}` };
    expect((await call(server, 'GET', '/api/v1/workflows', undefined, bearer)).status).toBe(200);

    const removed = await team.as('admin', 'DELETE', `/api/v1/members/${m.id}`);
    expect(removed.status).toBe(204);
    expect((await team.as(m, 'GET', '/api/v1/workflows')).status).toBe(401);
    expect((await call(server, 'GET', '/api/v1/workflows', undefined, bearer)).status).toBe(401);
    const wf = await server.api('POST', '/api/v1/workflows', { name: 's' });
    const stream = await fetch(`${server.url}/api/v1/workflows/${wf.body.id}/test-events/stream`, {
      headers: { cookie: m.cookie },
    });
    expect(stream.status).toBe(401);
    await stream.body?.cancel();
    const members = await team.as('admin', 'GET', '/api/v1/members');
    expect(members.body.items.map((x: { id: string }) => x.id)).not.toContain(m.id);
    expect((await team.as('admin', 'DELETE', `/api/v1/members/${m.id}`)).status).toBe(404);
  });

  it('an admin cannot change or remove the owner; nobody becomes owner but by transfer', async () => {
    const owner = team.members.owner;
    const change = await team.as('admin', 'PATCH', `/api/v1/members/${owner.id}`, { role: 'viewer' });
    expect(change.status).toBe(403);
    expect(change.body.code).toBe('forbidden');
    const remove = await team.as('admin', 'DELETE', `/api/v1/members/${owner.id}`);
    expect(remove.status).toBe(403);
    const toOwner = await team.as('owner', 'PATCH', `/api/v1/members/${team.members.admin.id}`, {
      role: 'owner',
    });
    expect(toOwner.status).toBe(400);
    const byAdmin = await team.as(
      'admin',
      'POST',
      `/api/v1/members/${team.members.admin.id}/transfer-ownership`,
    );
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.message).toContain('owner');
  });

  it('the owner hands ownership on and becomes an admin; the CLI tokens follow the owner', async () => {
    const next = await team.join('next@example.com', 'admin');
    const res = await team.as('owner', 'POST', `/api/v1/members/${next.id}/transfer-ownership`);
    expect(res.status).toBe(200);
    expect(res.body.role).toBe('owner');
    const members = await team.as(next, 'GET', '/api/v1/members');
    const roles = Object.fromEntries(
      members.body.items.map((m: { email: string; role: string }) => [m.email, m.role]),
    );
    expect(roles['owner@example.com']).toBe('admin');
    expect(roles['next@example.com']).toBe('owner');
    expect(members.body.items.filter((m: { role: string }) => m.role === 'owner')).toHaveLength(1);
    const old = await team.as('owner', 'POST', `/api/v1/members/${next.id}/transfer-ownership`);
    expect(old.status).toBe(403);
    // The harness's token was made like `hookflow tokens create`: the owner's, whoever that is.
    expect((await server.api('GET', '/api/v1/members')).status).toBe(200);
    const back = await server.api('POST', `/api/v1/members/${team.members.owner.id}/transfer-ownership`);
    expect(back.status).toBe(200);
  });
});
