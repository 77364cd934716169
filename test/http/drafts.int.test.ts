/**
 * Draft and published (SPEC 1, 3, 8; issue 17): every save is a new version, the draft; production
 * runs only `publishedVersion` — its steps *and* its trigger (path, methods, auth, response mode) —
 * until `publish` or `activate` makes the latest version live. Test listening and test runs use the
 * draft. Replay takes `target` (`published`, the default, in production mode; `draft` in test
 * mode). Existing active workflows get `publishedVersion` = their version by migration.
 */
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { SQLITE_FILE } from '../../src/store/sqlite/store.js';
import { createTestDatabase, endPool } from '../helpers/postgres.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  json,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A workflow whose answer (response mode lastStep) is the value its `set` step sets. */
const answering = (path: string, value: string, extra: Record<string, unknown> = {}) => ({
  name: `drafts ${path}`,
  trigger: { path, response: { mode: 'lastStep' }, ...extra },
  steps: [{ name: 'value', type: 'set', fields: { value } }],
});

const setValue = (value: string) => ({ steps: [{ name: 'value', type: 'set', fields: { value } }] });

/** Call a webhook URL; its answer, status and the execution it recorded (once finished). */
async function call(route: string, init: RequestInit = {}) {
  const res = await fetch(`${server.url}${route}`, { method: 'POST', body: 'a=1', ...init });
  const body = await json(res);
  const executionId = res.headers.get('x-hookflow-execution-id');
  const execution = executionId
    ? await eventually(async () => {
        const e = (await server.api('GET', `/api/v1/executions/${executionId}`)).body;
        return e.status !== 'queued' && e.status !== 'running' && e;
      })
    : undefined;
  return { status: res.status, body, execution };
}

async function finished(executionId: string) {
  return eventually(async () => {
    const e = (await server.api('GET', `/api/v1/executions/${executionId}`)).body;
    return e.status !== 'queued' && e.status !== 'running' && e;
  });
}

describe('saving an active workflow changes only its draft', () => {
  it('production keeps answering and recording the published version until publish', async () => {
    const created = await createWorkflow(server, answering('drafts-save', 'one'));
    expect(created.version).toBe(1);
    expect(created.publishedVersion).toBeNull();
    const activated = await server.api('POST', `/api/v1/workflows/${created.id}/activate`);
    expect(activated.body).toMatchObject({ active: true, version: 1, publishedVersion: 1 });

    const saved = await server.api('PATCH', `/api/v1/workflows/${created.id}`, setValue('two'));
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ active: true, version: 2, publishedVersion: 1 });
    // The API shows the draft: what the editor edits.
    expect(saved.body.steps[0].fields.value).toBe('two');
    expect((await server.api('GET', `/api/v1/workflows/${created.id}`)).body.publishedVersion).toBe(1);

    const live = await call('/webhook/drafts-save');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ value: 'one' });
    expect(live.execution).toMatchObject({ workflowVersion: 1, mode: 'production', status: 'succeeded' });

    const published = await server.api('POST', `/api/v1/workflows/${created.id}/publish`);
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ active: true, version: 2, publishedVersion: 2 });
    const after = await call('/webhook/drafts-save');
    expect(after.body).toEqual({ value: 'two' });
    expect(after.execution).toMatchObject({ workflowVersion: 2, mode: 'production' });
  });

  it("the draft's trigger (path, auth, response mode) is not live either, until published", async () => {
    const wf = await createActiveWorkflow(server, answering('drafts-trigger-old', 'old'));
    const saved = await server.api('PUT', `/api/v1/workflows/${wf.id}`, {
      name: wf.name,
      trigger: {
        path: 'drafts-trigger-new',
        methods: ['PUT'],
        auth: { type: 'header', name: 'X-Key', value: 'secret-key' },
        response: { mode: 'immediately', status: 202 },
      },
      steps: setValue('new').steps,
    });
    expect(saved.status).toBe(200);

    // Still the published trigger: old path, POST, no auth, lastStep.
    const old = await call('/webhook/drafts-trigger-old');
    expect(old.status).toBe(200);
    expect(old.body).toEqual({ value: 'old' });
    expect((await call('/webhook/drafts-trigger-new', { method: 'PUT' })).status).toBe(404);

    const published = await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    expect(published.body.publishedVersion).toBe(2);
    expect((await call('/webhook/drafts-trigger-old')).status).toBe(404);
    expect((await call('/webhook/drafts-trigger-new', { method: 'POST' })).status).toBe(405);
    const noKey = await call('/webhook/drafts-trigger-new', { method: 'PUT' });
    expect(noKey.status).toBe(401);
    const withKey = await call('/webhook/drafts-trigger-new', {
      method: 'PUT',
      headers: { 'x-key': 'secret-key' },
    });
    expect(withKey.status).toBe(202);
    expect(withKey.execution).toMatchObject({ workflowVersion: 2, steps: [{ output: { value: 'new' } }] });
  });

  it('activate makes the latest version live; deactivate keeps publishedVersion', async () => {
    const wf = await createActiveWorkflow(server, answering('drafts-activate', 'v1'));
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, setValue('v2'));
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, setValue('v3'));
    expect((await call('/webhook/drafts-activate')).body).toEqual({ value: 'v1' });

    // Already active: activate still publishes the latest version (SPEC 1).
    const activated = await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    expect(activated.body).toMatchObject({ active: true, version: 3, publishedVersion: 3 });
    expect((await call('/webhook/drafts-activate')).body).toEqual({ value: 'v3' });

    const off = await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
    expect(off.body).toMatchObject({ active: false, version: 3, publishedVersion: 3 });
    expect((await call('/webhook/drafts-activate')).status).toBe(404);

    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, setValue('v4'));
    const on = await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    expect(on.body).toMatchObject({ active: true, version: 4, publishedVersion: 4 });
    expect((await call('/webhook/drafts-activate')).body).toEqual({ value: 'v4' });
  });

  it('publish activates an inactive workflow, answers 404 for an unknown id, and is in the OpenAPI document', async () => {
    const wf = await createWorkflow(server, answering('drafts-publish-inactive', 'p'));
    expect((await call('/webhook/drafts-publish-inactive')).status).toBe(404);
    const published = await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ active: true, version: 1, publishedVersion: 1 });
    expect((await call('/webhook/drafts-publish-inactive')).body).toEqual({ value: 'p' });

    const unknown = await server.api(
      'POST',
      '/api/v1/workflows/01a1fffd-0000-7000-8000-000000000000/publish',
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');

    const doc = (await server.api('GET', '/api/v1/openapi.json')).body;
    expect(doc.paths['/api/v1/workflows/{id}/publish']?.post).toBeDefined();
    const listed = (await server.api('GET', '/api/v1/workflows?limit=200')).body.items;
    expect(listed.every((w: { publishedVersion: unknown }) => w.publishedVersion !== undefined)).toBe(true);
  });
});

describe('test listening and test runs use the draft', () => {
  it('the test URL serves the draft trigger and runs the draft; production stays on the published version', async () => {
    const wf = await createActiveWorkflow(server, answering('drafts-test-live', 'live'));
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      trigger: { path: 'drafts-test-draft' },
      ...setValue('draft'),
    });
    const listener = await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {
      keepListening: true,
    });
    expect(listener.status).toBe(201);
    expect(listener.body.testUrl).toBe('http://hookflow.test/webhook-test/drafts-test-draft');

    const test = await call('/webhook-test/drafts-test-draft');
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ value: 'draft' });
    expect(test.execution).toMatchObject({ workflowVersion: 2, mode: 'test' });
    // The published path is not the draft's test URL.
    const oldTest = await call('/webhook-test/drafts-test-live');
    expect(oldTest.status).toBe(404);
    expect(oldTest.body.code).toBe('test_webhook_not_listening');

    // Saving while listening: the open listener follows the new draft.
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      trigger: { path: 'drafts-test-draft2' },
      ...setValue('draft 2'),
    });
    const again = await call('/webhook-test/drafts-test-draft2');
    expect(again.body).toEqual({ value: 'draft 2' });
    expect(again.execution).toMatchObject({ workflowVersion: 3, mode: 'test' });

    const live = await call('/webhook/drafts-test-live');
    expect(live.body).toEqual({ value: 'live' });
    expect(live.execution).toMatchObject({ workflowVersion: 1, mode: 'production' });
    await server.api('DELETE', `/api/v1/workflows/${wf.id}/test-listener`);
  });

  it("saving a listening workflow onto another listener's method+path is refused (409 path_conflict)", async () => {
    const holder = await createWorkflow(server, answering('drafts-listen-held', 'h'));
    const mover = await createWorkflow(server, answering('drafts-listen-mover', 'm'));
    for (const w of [holder, mover])
      expect((await server.api('POST', `/api/v1/workflows/${w.id}/test-listener`)).status).toBe(201);
    const moved = await server.api('PATCH', `/api/v1/workflows/${mover.id}`, {
      trigger: { path: 'drafts-listen-held' },
    });
    expect(moved.status).toBe(409);
    expect(moved.body.code).toBe('path_conflict');
    expect(moved.body.message).toContain(holder.id);
    expect(moved.body.conflictingWorkflow).toEqual({ id: holder.id, name: holder.name });
    // The holder's listener is untouched and still captures.
    expect((await call('/webhook-test/drafts-listen-held')).body).toEqual({ value: 'h' });
  });
});

describe('replay targets', () => {
  let productionExecution: string;
  beforeAll(async () => {
    const wf = await createActiveWorkflow(server, answering('drafts-replay', 'published'));
    productionExecution = (await call('/webhook/drafts-replay')).execution.id;
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, setValue('draft'));
  });

  const replay = (id: string, body?: unknown) => server.api('POST', `/api/v1/executions/${id}/replay`, body);

  it.each([
    ['no body', undefined],
    ['an empty body', {}],
    ['target published', { target: 'published' }],
  ])('%s replays into the published version, in production mode', async (_case, body) => {
    const res = await replay(productionExecution, body);
    expect(res.status).toBe(202);
    const e = await finished(res.body.executionId);
    expect(e).toMatchObject({
      workflowVersion: 1,
      mode: 'production',
      steps: [{ output: { value: 'published' } }],
    });
  });

  it('target draft replays into the latest version, in test mode', async () => {
    const res = await replay(productionExecution, { target: 'draft' });
    expect(res.status).toBe(202);
    const e = await finished(res.body.executionId);
    expect(e).toMatchObject({ workflowVersion: 2, mode: 'test', steps: [{ output: { value: 'draft' } }] });
  });

  it('retry keeps the version the execution ran', async () => {
    const res = await server.api('POST', `/api/v1/executions/${productionExecution}/retry`);
    const e = await finished(res.body.executionId);
    expect(e).toMatchObject({ workflowVersion: 1, mode: 'production', retryOf: productionExecution });
  });

  it('an unknown target is 400 validation_failed', async () => {
    const res = await replay(productionExecution, { target: 'live' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('a workflow never published: target published is 409 not_published, target draft runs', async () => {
    const wf = await createWorkflow(server, answering('drafts-never', 'never'));
    await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`);
    const test = await call('/webhook-test/drafts-never');
    expect(test.execution).toMatchObject({ workflowVersion: 1, mode: 'test' });

    for (const body of [undefined, { target: 'published' }]) {
      const refused = await replay(test.execution.id, body);
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('not_published');
      expect(refused.body.message).toContain('never been published');
      expect(refused.body.hint).toContain('"target":"draft"');
    }
    const draft = await replay(test.execution.id, { target: 'draft' });
    expect(draft.status).toBe(202);
    expect(await finished(draft.body.executionId)).toMatchObject({ workflowVersion: 1, mode: 'test' });
  });
});

describe('path conflicts are about published triggers', () => {
  it("a draft's path is not taken until published; a published one is", async () => {
    const a = await createActiveWorkflow(server, answering('drafts-conflict-p', 'a'));
    // A's draft moves to q; production still owns p.
    expect(
      (await server.api('PATCH', `/api/v1/workflows/${a.id}`, { trigger: { path: 'drafts-conflict-q' } }))
        .status,
    ).toBe(200);

    const onP = await createWorkflow(server, answering('drafts-conflict-p', 'b'));
    const refused = await server.api('POST', `/api/v1/workflows/${onP.id}/activate`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('path_conflict');

    // q is only A's draft: another workflow may go live there …
    const onQ = await createActiveWorkflow(server, answering('drafts-conflict-q', 'c'));
    expect((await call('/webhook/drafts-conflict-q')).body).toEqual({ value: 'c' });
    // … and then A cannot publish its draft onto it, nor save it again while active.
    const publish = await server.api('POST', `/api/v1/workflows/${a.id}/publish`);
    expect(publish.status).toBe(409);
    expect(publish.body.message).toContain(onQ.id);
    // The other workflow by id and name, for a link (issue 17 #6).
    expect(publish.body.conflictingWorkflow).toEqual({ id: onQ.id, name: onQ.name });
    const save = await server.api('PATCH', `/api/v1/workflows/${a.id}`, { name: 'renamed' });
    expect(save.status).toBe(409);
    expect(save.body).toMatchObject({ code: 'path_conflict', conflictingWorkflow: { id: onQ.id } });
    // A full save (PUT, as the editor sends) onto another active workflow's path too.
    const current = (await server.api('GET', `/api/v1/workflows/${a.id}`)).body;
    const put = await server.api('PUT', `/api/v1/workflows/${a.id}`, {
      name: current.name,
      trigger: { ...current.trigger, path: 'drafts-conflict-q' },
      steps: current.steps,
    });
    expect(put.status).toBe(409);
    expect(put.body.conflictingWorkflow).toEqual({ id: onQ.id, name: onQ.name });
    // Nothing changed for production.
    expect((await call('/webhook/drafts-conflict-p')).body).toEqual({ value: 'a' });
    expect((await server.api('GET', `/api/v1/workflows/${a.id}`)).body.publishedVersion).toBe(1);
  });
});

describe('migration 0006: existing active workflows get publishedVersion = version', () => {
  /** A store at the schema before drafts (0005), with one active (v3) and one inactive (v2) workflow. */
  async function previousSchema(db: Kysely<unknown>, caps: Parameters<typeof migrationProvider>[0]) {
    const all = await migrationProvider(caps).getMigrations();
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => all },
      migrationTableName: 'hookflow_migrations',
      migrationLockTableName: 'hookflow_migrations_lock',
    });
    const { error } = await migrator.migrateTo('0005_rate_limits');
    if (error) throw error;
    const now = new Date().toISOString();
    const trigger = (p: string) =>
      JSON.stringify({
        type: 'webhook',
        methods: ['POST'],
        path: p,
        auth: { type: 'none' },
        response: { mode: 'lastStep' },
        options: {},
      });
    const steps = (value: string) => JSON.stringify(setValue(value).steps);
    const rows = [
      { id: '01a1fffd-0000-7000-8000-0000000000a1', active: 1, version: 3, path: 'migrated-active' },
      { id: '01a1fffd-0000-7000-8000-0000000000a2', active: 0, version: 2, path: 'migrated-inactive' },
    ];
    for (const r of rows) {
      await sql`insert into workflows (id, name, active, version, trigger, steps, created_at, updated_at)
        values (${r.id}, ${r.path}, ${r.active}, ${r.version}, ${trigger(r.path)}, ${steps(`v${r.version}`)}, ${now}, ${now})`.execute(
        db,
      );
      for (let v = 1; v <= r.version; v++) {
        const definition = JSON.stringify({
          id: r.id,
          name: r.path,
          active: r.active === 1,
          version: v,
          trigger: JSON.parse(trigger(r.path)),
          steps: JSON.parse(steps(`v${v}`)),
          createdAt: now,
          updatedAt: now,
        });
        await sql`insert into workflow_versions (workflow_id, version, definition, created_at)
          values (${r.id}, ${v}, ${definition}, ${now})`.execute(db);
      }
    }
    return rows;
  }

  async function check(upgraded: TestServer, rows: { id: string; version: number; path: string }[]) {
    const [active, inactive] = rows as [(typeof rows)[0], (typeof rows)[0]];
    const a = (await upgraded.api('GET', `/api/v1/workflows/${active.id}`)).body;
    expect(a).toMatchObject({ active: true, version: 3, publishedVersion: 3 });
    const i = (await upgraded.api('GET', `/api/v1/workflows/${inactive.id}`)).body;
    expect(i).toMatchObject({ active: false, version: 2, publishedVersion: null });

    const res = await fetch(`${upgraded.url}/webhook/${active.path}`, { method: 'POST', body: 'a=1' });
    expect(await json(res)).toEqual({ value: 'v3' });
    const e = (await upgraded.api('GET', `/api/v1/executions/${res.headers.get('x-hookflow-execution-id')}`))
      .body;
    expect(e.workflowVersion).toBe(3);
    // And from here on, a save is a draft.
    await upgraded.api('PATCH', `/api/v1/workflows/${active.id}`, setValue('v4'));
    const after = await fetch(`${upgraded.url}/webhook/${active.path}`, { method: 'POST', body: 'a=1' });
    expect(await json(after)).toEqual({ value: 'v3' });
  }

  it('on SQLite', async () => {
    const dataDir = tempDir();
    const db = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new Database(path.join(dataDir, SQLITE_FILE)) }),
    });
    let rows: Awaited<ReturnType<typeof previousSchema>>;
    try {
      rows = await previousSchema(db, {
        name: 'sqlite',
        binaryType: 'blob',
        skipLocked: false,
        shared: false,
      });
    } finally {
      await db.destroy();
    }
    const upgraded = await startTestServer({ dataDir });
    try {
      await check(upgraded, rows);
    } finally {
      await upgraded.close();
    }
  });

  it('on PostgreSQL', async () => {
    const database = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: database.url });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    let upgraded: TestServer | undefined;
    try {
      let rows: Awaited<ReturnType<typeof previousSchema>>;
      try {
        rows = await previousSchema(db, {
          name: 'postgres',
          binaryType: 'bytea',
          skipLocked: true,
          shared: true,
        });
      } finally {
        await endPool(pool, () => db.destroy());
      }
      upgraded = await startTestServer({
        env: {
          HOOKFLOW_DATABASE_URL: database.url,
          HOOKFLOW_ENCRYPTION_KEY: 'test-key-for-postgres-0123456789abcdef',
        },
      });
      await check(upgraded, rows);
    } finally {
      await upgraded?.close();
      await database.drop();
    }
  });
});
