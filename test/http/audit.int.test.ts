/**
 * The audit log (SPEC 11b) over real HTTP, on SQLite and PostgreSQL: a row for each change with
 * its actor and address, filters, no secret in it, retention, and the row committed with its
 * change or not at all.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { call, makeTeam, PASSWORD, type Team } from '../helpers/team.js';

const HEADER_SECRET = 'header-secret-for-the-audit';
const CREDENTIAL_SECRET = 'credential-secret-for-the-audit';
const ROTATED_SECRET = 'rotated-secret-for-the-audit';

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('audit log on $dialect', ({ postgres }) => {
  let server: TestServer;
  let team: Team;
  let workflowId: string;

  beforeAll(async () => {
    server = await startTestServer({ postgres, env: { HOOKFLOW_AUDIT_MAX_AGE: '30d' } });
    team = await makeTeam(server);
  });
  afterAll(() => server?.close());

  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  const audit = async (query = ''): Promise<any[]> => {
    const res = await team.as('admin', 'GET', `/api/v1/audit${query}`);
    expect(res.status).toBe(200);
    return res.body.items;
  };

  it('records every change with its actor and address', async () => {
    const editor = team.members.editor;
    const wf = await team.as(editor, 'POST', '/api/v1/workflows', {
      name: 'audited',
      trigger: { type: 'webhook', auth: { type: 'header', name: 'x-key', value: HEADER_SECRET } },
    });
    workflowId = wf.body.id;
    await team.as(editor, 'PATCH', `/api/v1/workflows/${workflowId}`, { name: 'audited 2' });
    await team.as(editor, 'POST', `/api/v1/workflows/${workflowId}/publish`);
    await team.as(editor, 'POST', `/api/v1/workflows/${workflowId}/deactivate`);
    await team.as(editor, 'POST', `/api/v1/workflows/${workflowId}/activate`);
    await team.as(editor, 'POST', `/api/v1/workflows/${workflowId}/versions/1/restore`);
    const cred = await team.as(editor, 'POST', '/api/v1/credentials', {
      name: 'api',
      type: 'bearer',
      data: { token: CREDENTIAL_SECRET },
    });
    await team.as(editor, 'PATCH', `/api/v1/credentials/${cred.body.id}`, {
      data: { token: ROTATED_SECRET },
    });
    await team.as(editor, 'DELETE', `/api/v1/credentials/${cred.body.id}`);
    const token = await team.as(editor, 'POST', '/api/v1/tokens', { name: 'ci' });
    await team.as(editor, 'DELETE', `/api/v1/tokens/${token.body.id}`);
    const doomed = await team.join('doomed@example.com', 'viewer');
    await team.as('admin', 'PATCH', `/api/v1/members/${doomed.id}`, { role: 'editor' });
    await team.as('admin', 'DELETE', `/api/v1/members/${doomed.id}`);
    await call(server, 'POST', '/api/v1/auth/login', { email: editor.email, password: PASSWORD });
    await call(server, 'POST', '/api/v1/auth/login', { email: editor.email, password: 'wrong password' });
    const other = await team.as(editor, 'POST', '/api/v1/workflows', { name: 'to delete' });
    await team.as(editor, 'DELETE', `/api/v1/workflows/${other.body.id}`);

    const items = await audit('?limit=200');
    const actions = items.map((i) => i.action);
    for (const action of [
      'workflow.create',
      'workflow.save',
      'workflow.publish',
      'workflow.deactivate',
      'workflow.activate',
      'workflow.restore',
      'workflow.delete',
      'credential.create',
      'credential.rotate',
      'credential.delete',
      'token.create',
      'token.revoke',
      'member.invite',
      'member.join',
      'member.role_change',
      'member.remove',
      'auth.sign_in',
      'auth.sign_in_failed',
    ]) {
      expect(actions, action).toContain(action);
    }
    const publish = items.find((i) => i.action === 'workflow.publish');
    expect(publish).toMatchObject({
      actor: { type: 'user', id: editor.id, name: 'editor@example.com' },
      target: { type: 'workflow', id: workflowId, name: 'audited 2' },
      details: { publishedVersion: 2 },
    });
    expect(publish.ip).toMatch(/127\.0\.0\.1/);
    expect(items.find((i) => i.action === 'member.role_change').details).toEqual({
      from: 'viewer',
      to: 'editor',
    });
    // Newest first.
    expect(items.map((i) => i.id)).toEqual([...items.map((i) => i.id)].sort().reverse());
  });

  it('an API token is the actor of what it does', async () => {
    await server.api('PATCH', `/api/v1/workflows/${workflowId}`, { name: 'by token' });
    const [last] = await audit(`?workflowId=${workflowId}&limit=1`);
    expect(last.actor).toMatchObject({ type: 'token', name: 'test' });
  });

  it('holds no secret', async () => {
    const text = JSON.stringify(await audit('?limit=200'));
    for (const secret of [HEADER_SECRET, CREDENTIAL_SECRET, ROTATED_SECRET, PASSWORD, 'wrong password']) {
      expect(text).not.toContain(secret);
    }
  });

  it('filters by actor, action and workflow', async () => {
    const byEditor = await audit(`?actor=${team.members.editor.id}&limit=200`);
    expect(byEditor.length).toBeGreaterThan(5);
    expect(byEditor.every((i) => i.actor.id === team.members.editor.id)).toBe(true);
    const byEmail = await audit('?actor=editor%40example.com&limit=200');
    expect(byEmail.length).toBe(byEditor.length);
    const publishes = await audit('?action=workflow.publish');
    expect(publishes.length).toBe(1);
    const ofWorkflow = await audit(`?workflowId=${workflowId}&limit=200`);
    expect(ofWorkflow.every((i) => i.target.id === workflowId)).toBe(true);
    const page1 = await team.as('admin', 'GET', '/api/v1/audit?limit=2');
    const page2 = await team.as('admin', 'GET', `/api/v1/audit?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.items[0].id < page1.body.items[1].id).toBe(true);
  });

  it('a change and its row commit together: no row makes no change', async () => {
    const db = server.hookflow.store.db;
    const before = await server.api('GET', `/api/v1/workflows/${workflowId}`);
    await sql`alter table audit_log rename to audit_log_away`.execute(db);
    try {
      const res = await team.as('editor', 'PATCH', `/api/v1/workflows/${workflowId}`, {
        name: 'never saved',
      });
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      await sql`alter table audit_log_away rename to audit_log`.execute(db);
    }
    const after = await server.api('GET', `/api/v1/workflows/${workflowId}`);
    expect(after.body.name).toBe(before.body.name);
    expect(after.body.version).toBe(before.body.version);
  });

  it('rows older than HOOKFLOW_AUDIT_MAX_AGE are deleted', async () => {
    const db = server.hookflow.store.db;
    const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
    await db
      .insertInto('audit_log')
      .values({
        id: '00000000-0000-7000-8000-000000000001',
        at: old,
        actor_type: 'system',
        actor_id: null,
        actor_name: 'hookflow',
        action: 'workflow.import',
        target_type: 'workflow',
        target_id: null,
        target_name: null,
        workflow_id: null,
        details: '{}',
        ip: null,
      })
      .execute();
    const items = await audit('?action=workflow.import');
    expect(items).toEqual([]);
  });
});
