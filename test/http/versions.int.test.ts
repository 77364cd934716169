/**
 * Reading one saved version (SPEC 7c `GET /workflows/:id/versions/:version`): the editor fetches
 * the published version to show it beside the draft before publishing (issue 17). Secrets are
 * masked as on the workflow; unknown workflows and versions are 404 not_found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const setValue = (value: string) => ({ steps: [{ name: 'value', type: 'set', fields: { value } }] });

describe('GET /api/v1/workflows/:id/versions/:version', () => {
  it('returns each saved version as it was, the published one included, secrets masked', async () => {
    const created = await createWorkflow(server, {
      name: 'versions one',
      trigger: { path: 'versions-read', auth: { type: 'basic', username: 'u', password: 'hunter2' } },
      ...setValue('one'),
    });
    const id = created.id as string;
    expect((await server.api('POST', `/api/v1/workflows/${id}/publish`)).body.publishedVersion).toBe(1);
    const saved = await server.api('PUT', `/api/v1/workflows/${id}`, {
      name: 'versions two',
      trigger: { path: 'versions-read', auth: { type: 'basic', username: 'u', password: '***' } },
      ...setValue('two'),
    });
    expect(saved.body).toMatchObject({ version: 2, publishedVersion: 1 });

    const v1 = await server.api('GET', `/api/v1/workflows/${id}/versions/1`);
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({
      version: 1,
      name: 'versions one',
      steps: [{ name: 'value', type: 'set', fields: { value: 'one' } }],
    });
    expect(v1.body.trigger).toMatchObject({
      path: 'versions-read',
      auth: { type: 'basic', password: '***' },
    });
    expect(typeof v1.body.createdAt).toBe('string');
    expect(JSON.stringify(v1.body)).not.toContain('hunter2');

    const v2 = await server.api('GET', `/api/v1/workflows/${id}/versions/2`);
    expect(v2.body).toMatchObject({ version: 2, name: 'versions two' });
    expect(v2.body.steps[0].fields.value).toBe('two');
    expect(JSON.stringify(v2.body)).not.toContain('hunter2');
  });

  it('answers 404 not_found for an unknown version or workflow, 400 for a version that is no number', async () => {
    const created = await createWorkflow(server, { name: 'versions 404', trigger: { path: 'versions-404' } });
    const noVersion = await server.api('GET', `/api/v1/workflows/${created.id}/versions/7`);
    expect(noVersion.status).toBe(404);
    expect(noVersion.body).toMatchObject({ code: 'not_found' });
    expect(noVersion.body.message).toContain('no version 7');

    const noWorkflow = await server.api('GET', '/api/v1/workflows/nope/versions/1');
    expect(noWorkflow.status).toBe(404);
    expect(noWorkflow.body).toMatchObject({ code: 'not_found' });
    expect(noWorkflow.body.message).toContain('no workflow');

    const bad = await server.api('GET', `/api/v1/workflows/${created.id}/versions/latest`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'validation_failed' });
  });
});

describe('GET /api/v1/workflows/:id/versions and POST …/versions/:version/restore', () => {
  it('lists versions newest first with paging, and 404 for an unknown workflow', async () => {
    const created = await createWorkflow(server, { name: 'history v1', trigger: { path: 'versions-list' } });
    const id = created.id as string;
    for (const n of [2, 3]) {
      const saved = await server.api('PATCH', `/api/v1/workflows/${id}`, { name: `history v${n}` });
      expect(saved.body.version).toBe(n);
    }
    const all = await server.api('GET', `/api/v1/workflows/${id}/versions`);
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    // savedBy: the API token that saved it (the test server's token is named "test").
    expect(all.body.items[0]).toEqual({
      version: 3,
      name: 'history v3',
      createdAt: expect.any(String),
      savedBy: 'token "test"',
    });
    expect(all.body.items.map((v: { savedBy: string }) => v.savedBy)).toEqual(Array(3).fill('token "test"'));
    expect(all.body.items[2].name).toBe('history v1');

    const first = await server.api('GET', `/api/v1/workflows/${id}/versions?limit=2`);
    expect(first.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    expect(typeof first.body.nextCursor).toBe('string');
    const rest = await server.api(
      'GET',
      `/api/v1/workflows/${id}/versions?limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(rest.body.items.map((v: { version: number }) => v.version)).toEqual([1]);
    expect(rest.body.nextCursor).toBeNull();

    const badCursor = await server.api('GET', `/api/v1/workflows/${id}/versions?cursor=nonsense`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.code).toBe('validation_failed');

    const none = await server.api('GET', '/api/v1/workflows/nope/versions');
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('not_found');
  });

  it('restores a version as a new draft (content, settings and secrets of that version); publishing stays separate', async () => {
    const errorTarget = await createWorkflow(server, { name: 'versions error target' });
    const created = await createWorkflow(server, {
      name: 'restore one',
      trigger: { path: 'versions-restore', auth: { type: 'basic', username: 'u', password: 'first-pass' } },
      settings: { errorWorkflowId: errorTarget.id },
      ...setValue('one'),
    });
    const id = created.id as string;
    expect(created.settings).toEqual({ errorWorkflowId: errorTarget.id });
    expect((await server.api('POST', `/api/v1/workflows/${id}/publish`)).body.publishedVersion).toBe(1);
    const v2 = await server.api('PUT', `/api/v1/workflows/${id}`, {
      name: 'restore two',
      trigger: { path: 'versions-restore', auth: { type: 'basic', username: 'u', password: 'second-pass' } },
      settings: {},
      ...setValue('two'),
    });
    expect(v2.body).toMatchObject({ version: 2, settings: {} });

    const v1 = await server.api('GET', `/api/v1/workflows/${id}/versions/1`);
    expect(v1.body.settings).toEqual({ errorWorkflowId: errorTarget.id });

    const restored = await server.api('POST', `/api/v1/workflows/${id}/versions/1/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({
      id,
      name: 'restore one',
      version: 3,
      publishedVersion: 1,
      settings: { errorWorkflowId: errorTarget.id },
      steps: [{ name: 'value', type: 'set', fields: { value: 'one' } }],
    });
    expect(restored.body.trigger.auth).toMatchObject({ type: 'basic', password: '***' });
    expect(JSON.stringify(restored.body)).not.toContain('first-pass');

    // Publishing the restored draft makes version 1's password the live one again.
    expect((await server.api('POST', `/api/v1/workflows/${id}/publish`)).body.publishedVersion).toBe(3);
    const basic = (password: string) =>
      fetch(`${server.url}/webhook/versions-restore`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`u:${password}`).toString('base64')}` },
      });
    expect((await basic('first-pass')).status).toBe(200);
    expect((await basic('second-pass')).status).toBe(401);

    const history = await server.api('GET', `/api/v1/workflows/${id}/versions`);
    expect(history.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);

    const unknown = await server.api('POST', `/api/v1/workflows/${id}/versions/9/restore`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
  });

  it('lists the version routes in the OpenAPI document', async () => {
    const doc = await server.api('GET', '/api/v1/openapi.json');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/workflows/{id}/versions',
        '/api/v1/workflows/{id}/versions/{version}',
        '/api/v1/workflows/{id}/versions/{version}/restore',
      ]),
    );
  });
});
