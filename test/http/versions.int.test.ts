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
