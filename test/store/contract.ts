/**
 * The store contract: one suite, written once, run against every dialect (sqlite.int.test.ts,
 * postgres.int.test.ts). It exercises the repositories, the queue, transactions and the learned
 * schema upsert through the real Kysely store, so a dialect difference shows up as a failing test
 * here rather than in production.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { LocalBus } from '../../src/bus/bus.js';
import { type ExecutionResult, LEASE_MS, MAX_ATTEMPTS, Queue } from '../../src/queue/queue.js';
import { type ExecutionFilter, executionsRepo } from '../../src/store/executions.js';
import { queueRepo } from '../../src/store/queue.js';
import { schedulesRepo } from '../../src/store/schedules.js';
import type {
  VariableRow,
  ApiTokenRow,
  Database,
  ExecutionRow,
  NewBlobRow,
  NewExecutionRow,
} from '../../src/store/schema.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { migrate } from '../../src/store/open.js';
import type { ExecutionCompletion, Store } from '../../src/store/store.js';
import { credentialsRepo } from '../../src/store/credentials.js';
import { invitationsRepo } from '../../src/store/invitations.js';
import { oauth2Repo } from '../../src/store/oauth2.js';
import { tokensRepo } from '../../src/store/tokens.js';
import { usersRepo } from '../../src/store/users.js';
import { dataStoreContract } from './data-store-contract.js';
import { workflowsRepo } from '../../src/store/workflows.js';
import { BLOB_PART_BYTES, blobFiles, blobsRepo } from '../../src/store/blobs.js';
import { variablesRepo } from '../../src/store/variables.js';
import { idFloor, type WaitRow, waitsRepo } from '../../src/store/waits.js';
import { TestListeners } from '../../src/webhooks/test-listener.js';
import { StoreRateLimiter } from '../../src/webhooks/options/rate-limit.js';
import { learn } from '../../src/webhooks/schema/infer.js';
import type { WebhookWorkflow, Workflow } from '../../src/model/workflow.js';

export interface OpenedStore {
  store: Store;
  cleanup(): Promise<void>;
}

const TABLES = [
  'variables',
  'blob_parts',
  'workflows',
  'workflow_versions',
  'api_tokens',
  'executions',
  'test_listeners',
  'test_events',
  'learned_schemas',
  'blobs',
  'rate_limits',
  'users',
  'sessions',
  'invitations',
  'concurrency_marks',
  'credentials',
  'oauth2_tokens',
  'oauth2_authorizations',
  'schedules',
  'schedule_ticks',
  'execution_waits',
] as const satisfies readonly (keyof Database)[];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
/** n fresh ids, oldest first (UUIDv7 sort by creation; sorting makes that independent of the generator). */
const ids = (n: number) => Array.from({ length: n }, newId).sort();
const newestFirst = (xs: string[]) => [...xs].sort().reverse();

function workflow(overrides: Partial<WebhookWorkflow> = {}): WebhookWorkflow {
  const now = iso();
  const id = overrides.id ?? newId();
  return {
    id,
    name: `wf ${id}`,
    active: false,
    version: 1,
    publishedVersion: null,
    trigger: {
      type: 'webhook',
      methods: ['POST'],
      path: `hook-${id}`,
      auth: { type: 'none' },
      response: { mode: 'immediately' },
      options: {},
    },
    steps: [{ name: 'first', type: 'noop', extra: { nested: [1, 'two', null] } }],
    settings: {},
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

function token(overrides: Partial<ApiTokenRow> = {}): ApiTokenRow {
  const secret = randomBytes(16).toString('hex');
  return {
    id: newId(),
    name: 'ci',
    token_hash: createHash('sha256').update(secret).digest('hex'),
    prefix: secret.slice(0, 8),
    created_at: iso(),
    last_used_at: null,
    user_id: null,
    role: 'owner',
    ...overrides,
  };
}

function execution(overrides: Partial<NewExecutionRow> = {}): NewExecutionRow {
  return {
    id: newId(),
    workflow_id: 'wf-a',
    workflow_version: 1,
    mode: 'production',
    status: 'queued',
    trigger: JSON.stringify({ body: { hello: 'world' } }),
    steps: '[]',
    error: null,
    attempt: 1,
    retry_of: null,
    run_after: iso(-1_000),
    locked_until: null,
    locked_by: null,
    created_at: iso(),
    started_at: null,
    finished_at: null,
    warnings: null,
    resume_state: null,
    error_execution_id: null,
    concurrency_key: null,
    concurrency_limit: null,
    newest_value: null,
    skip_reason: null,
    parent_execution_id: null,
    parent_step: null,
    depth: 0,
    ...overrides,
  };
}

/** Every migration the code defines, in the order the Migrator applies them (by name). */
async function migrationNames(store: Store): Promise<string[]> {
  return Object.keys(await migrationProvider(store.caps).getMigrations()).sort();
}

/** A logger whose lines are kept, to tell what migrate() did. */
function memoryLogger() {
  const lines: { msg: string; migration?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(name, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await open());
    });

    afterAll(async () => {
      await cleanup?.();
    });

    // One store per file: every test starts from empty tables (the queue claims from the whole table).
    beforeEach(async () => {
      for (const table of TABLES) await store.db.deleteFrom(table).execute();
    });

    dataStoreContract(() => store);

    describe('migrations', () => {
      it.each(TABLES)('created table %s', async (table) => {
        await expect(store.db.selectFrom(table).selectAll().limit(1).execute()).resolves.toEqual([]);
      });

      it('records every migration once', async () => {
        const { rows } = await sql<{
          name: string;
        }>`select name from hookflow_migrations order by name`.execute(store.db);
        expect(rows.map((r) => r.name)).toEqual(await migrationNames(store));
      });

      it('re-running migrate() applies nothing and keeps the data', async () => {
        const w = workflow();
        await workflowsRepo.insert(store.db, w);
        const { log, lines } = memoryLogger();

        await migrate(store, log);
        log.flush();

        expect(lines.filter((l) => l.msg === 'migration applied')).toEqual([]);
        expect(await workflowsRepo.get(store.db, w.id)).toEqual(w);
        const { rows } = await sql<{
          n: number | string;
        }>`select count(*) as n from hookflow_migrations`.execute(store.db);
        expect(Number(rows[0]?.n)).toBe((await migrationNames(store)).length);
      });
    });

    describe('workflowsRepo', () => {
      it('get returns the inserted workflow and its version 1', async () => {
        const w = workflow({ active: true });
        await workflowsRepo.insert(store.db, w);
        expect(await workflowsRepo.get(store.db, w.id)).toEqual(w);
        expect(await workflowsRepo.getVersion(store.db, w.id, 1)).toEqual(w);
      });

      it.each([
        ['unknown id', () => workflowsRepo.get(store.db, newId())],
        ['unknown version', () => workflowsRepo.getVersion(store.db, newId(), 1)],
      ])('%s gives undefined', async (_case, read) => {
        expect(await read()).toBeUndefined();
      });

      it('update with newVersion saves the row and adds a history row; older versions stay readable', async () => {
        const v1 = workflow();
        await workflowsRepo.insert(store.db, v1);
        const v2: Workflow = { ...v1, name: 'renamed', version: 2, steps: [], updatedAt: iso(1_000) };

        await workflowsRepo.update(store.db, v2, true);

        expect(await workflowsRepo.get(store.db, v1.id)).toEqual(v2);
        expect(await workflowsRepo.getVersion(store.db, v1.id, 1)).toEqual(v1);
        expect(await workflowsRepo.getVersion(store.db, v1.id, 2)).toEqual(v2);
      });

      it('update without newVersion saves the row but not the history; createdAt is never changed', async () => {
        const w = workflow();
        await workflowsRepo.insert(store.db, w);
        const activated: Workflow = { ...w, active: true, createdAt: iso(99_000), updatedAt: iso(1_000) };

        await workflowsRepo.update(store.db, activated, false);

        expect(await workflowsRepo.get(store.db, w.id)).toEqual({ ...activated, createdAt: w.createdAt });
        expect(await workflowsRepo.getVersion(store.db, w.id, 1)).toEqual(w);
        const versions = await store.db.selectFrom('workflow_versions').selectAll().execute();
        expect(versions).toHaveLength(1);
      });

      it('list pages newest first with before', async () => {
        const all = ids(5);
        for (const id of all) await workflowsRepo.insert(store.db, workflow({ id }));
        const expected = newestFirst(all);

        const page1 = await workflowsRepo.list(store.db, { limit: 2 });
        const page2 = await workflowsRepo.list(store.db, { limit: 2, before: page1.at(-1)?.id });
        const page3 = await workflowsRepo.list(store.db, { limit: 2, before: page2.at(-1)?.id });
        const page4 = await workflowsRepo.list(store.db, { limit: 2, before: page3.at(-1)?.id });

        expect([page1, page2, page3, page4].map((p) => p.map((r) => r.id))).toEqual([
          expected.slice(0, 2),
          expected.slice(2, 4),
          expected.slice(4),
          [],
        ]);
      });

      it('listActive returns exactly the active workflows', async () => {
        const active = [workflow({ active: true }), workflow({ active: true })];
        for (const w of [...active, workflow(), workflow()]) await workflowsRepo.insert(store.db, w);

        const got = await workflowsRepo.listActive(store.db);

        expect(got.map((w) => w.id).sort()).toEqual(active.map((w) => w.id).sort());
        expect(got.every((w) => w.active)).toBe(true);
      });

      it('listPublished and getPublished give what production runs: the published version of active workflows', async () => {
        const v1 = workflow({ active: true, publishedVersion: 1 });
        await workflowsRepo.insert(store.db, v1);
        // A draft saved on top: the row is v2, production still runs v1 (under the row's state).
        const v2: Workflow = {
          ...v1,
          name: 'draft',
          version: 2,
          trigger: { ...v1.trigger, path: 'draft-path' },
          steps: [{ name: 's', type: 'set' }],
          updatedAt: iso(1_000),
        };
        await workflowsRepo.update(store.db, v2, true);
        const current = workflow({ active: true, publishedVersion: 1 });
        await workflowsRepo.insert(store.db, current);
        const inactive = workflow({ publishedVersion: 1 });
        await workflowsRepo.insert(store.db, inactive);

        const published = { ...v2, name: v1.name, version: 1, trigger: v1.trigger, steps: v1.steps };
        published.updatedAt = v1.updatedAt;
        const got = await workflowsRepo.listPublished(store.db);
        expect(got.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
          [published, current].sort((a, b) => a.id.localeCompare(b.id)),
        );
        expect(await workflowsRepo.getPublished(store.db, v1.id)).toEqual(published);
        expect(await workflowsRepo.getPublished(store.db, current.id)).toEqual(current);
        expect(await workflowsRepo.getPublished(store.db, inactive.id)).toBeUndefined();
      });

      it('delete removes the workflow and all its versions, and reports whether it existed', async () => {
        const w = workflow();
        const other = workflow();
        await workflowsRepo.insert(store.db, w);
        await workflowsRepo.insert(store.db, other);
        await workflowsRepo.update(store.db, { ...w, version: 2 }, true);

        expect(await workflowsRepo.delete(store.db, w.id)).toBe(true);

        expect(await workflowsRepo.get(store.db, w.id)).toBeUndefined();
        expect(await workflowsRepo.getVersion(store.db, w.id, 1)).toBeUndefined();
        expect(await workflowsRepo.getVersion(store.db, w.id, 2)).toBeUndefined();
        expect(await workflowsRepo.getVersion(store.db, other.id, 1)).toEqual(other);
        expect(await workflowsRepo.delete(store.db, w.id)).toBe(false);
      });
    });

    describe('credentialsRepo', () => {
      it('byName finds the rows of that exact name, newest first, up to the limit', async () => {
        const [a, b, c] = ids(3);
        const row = (id: string, name: string) => ({
          id,
          name,
          type: 'smtp' as const,
          data: 'enc:v1:sealed',
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-01T00:00:00.000Z',
        });
        await credentialsRepo.insert(store.db, row(a!, 'Mailer'));
        await credentialsRepo.insert(store.db, row(b!, 'Mailer'));
        await credentialsRepo.insert(store.db, row(c!, 'mailer'));
        expect((await credentialsRepo.byName(store.db, 'Mailer')).map((r) => r.id)).toEqual(
          newestFirst([a!, b!]),
        );
        expect((await credentialsRepo.byName(store.db, 'Mailer', 1)).map((r) => r.id)).toEqual([b!]);
        expect(await credentialsRepo.byName(store.db, 'nobody')).toEqual([]);
      });
    });

    describe('tokensRepo', () => {
      it('findByHash finds the inserted token, and nothing for an unknown hash', async () => {
        const t = token();
        await tokensRepo.insert(store.db, t);
        expect(await tokensRepo.findByHash(store.db, t.token_hash)).toEqual(t);
        expect(await tokensRepo.findByHash(store.db, 'f'.repeat(64))).toBeUndefined();
      });

      it('rejects a second token with the same hash', async () => {
        const t = token();
        await tokensRepo.insert(store.db, t);
        await expect(tokensRepo.insert(store.db, token({ token_hash: t.token_hash }))).rejects.toThrow();
      });

      it('list pages newest first with before', async () => {
        const all = ids(3);
        for (const id of all) await tokensRepo.insert(store.db, token({ id }));
        const expected = newestFirst(all);

        const page1 = await tokensRepo.list(store.db, { limit: 2 });
        const page2 = await tokensRepo.list(store.db, { limit: 2, before: page1.at(-1)?.id });

        expect(page1.map((t) => t.id)).toEqual(expected.slice(0, 2));
        expect(page2.map((t) => t.id)).toEqual(expected.slice(2));
      });

      it('touch sets last_used_at of that token only', async () => {
        const t = token();
        const other = token();
        await tokensRepo.insert(store.db, t);
        await tokensRepo.insert(store.db, other);
        const at = iso();

        await tokensRepo.touch(store.db, t.id, at);

        expect(await tokensRepo.findByHash(store.db, t.token_hash)).toEqual({ ...t, last_used_at: at });
        expect(await tokensRepo.findByHash(store.db, other.token_hash)).toEqual(other);
      });

      it('delete revokes the token and reports whether it existed', async () => {
        const t = token();
        await tokensRepo.insert(store.db, t);
        expect(await tokensRepo.delete(store.db, t.id)).toBe(true);
        expect(await tokensRepo.findByHash(store.db, t.token_hash)).toBeUndefined();
        expect(await tokensRepo.delete(store.db, t.id)).toBe(false);
      });
    });

    describe('members and invitations', () => {
      const user = (role: 'admin' | 'editor' | 'owner' = 'editor') => ({
        id: newId(),
        email: `${randomBytes(4).toString('hex')}@example.com`,
        password_hash: 'x',
        role,
        created_at: iso(),
      });

      it('take hands an invitation out once, and never an expired one', async () => {
        const row = {
          id: newId(),
          token_hash: randomBytes(16).toString('hex'),
          email: 'a@example.com',
          role: 'viewer' as const,
          invited_by: null,
          created_at: iso(),
          expires_at: iso(60_000),
        };
        await invitationsRepo.insert(store.db, row);
        expect(await invitationsRepo.take(store.db, row.token_hash, iso())).toEqual(row);
        expect(await invitationsRepo.take(store.db, row.token_hash, iso())).toBeUndefined();
        const old = { ...row, id: newId(), token_hash: 'old', expires_at: iso(-1) };
        await invitationsRepo.insert(store.db, old);
        expect(await invitationsRepo.take(store.db, 'old', iso())).toBeUndefined();
      });

      it("delete removes the member with their sessions and tokens, nobody else's", async () => {
        const gone = user();
        const kept = user();
        for (const u of [gone, kept]) {
          await usersRepo.insert(store.db, u);
          await tokensRepo.insert(store.db, token({ user_id: u.id, role: 'editor' }));
          await store.db
            .insertInto('sessions')
            .values({
              id: newId(),
              user_id: u.id,
              csrf_token: 'c',
              created_at: iso(),
              expires_at: iso(60_000),
            })
            .execute();
        }
        expect(await store.transaction((trx) => usersRepo.delete(trx, gone.id))).toBe(true);
        const tokens = await store.db.selectFrom('api_tokens').select('user_id').execute();
        const sessions = await store.db.selectFrom('sessions').select('user_id').execute();
        expect(tokens.map((t) => t.user_id)).toEqual([kept.id]);
        expect(sessions.map((t) => t.user_id)).toEqual([kept.id]);
        expect(await usersRepo.get(store.db, gone.id)).toBeUndefined();
      });

      it("findWithMember reads the member's current role; a token without one is the owner's", async () => {
        const u = user('admin');
        await usersRepo.insert(store.db, u);
        const t = token({ user_id: u.id, role: 'editor' });
        const cli = token();
        await tokensRepo.insert(store.db, t);
        await tokensRepo.insert(store.db, cli);
        await usersRepo.setRole(store.db, u.id, 'editor');
        expect(await tokensRepo.findWithMember(store.db, t.token_hash)).toMatchObject({
          member_role: 'editor',
          member_exists: true,
        });
        expect(await tokensRepo.findWithMember(store.db, cli.token_hash)).toMatchObject({
          role: 'owner',
          member_role: null,
          member_exists: false,
        });
      });
    });

    describe('waitsRepo (SPEC 7g)', () => {
      const wait = (over: Partial<WaitRow> = {}): WaitRow => ({
        execution_id: newId(),
        step: 'approval',
        kind: 'call',
        status: 'waiting',
        workflow_id: null,
        match: null,
        match_key: null,
        item: null,
        created_at: iso(),
        expires_at: iso(60_000),
        resumed_at: null,
        look_from: null,
        ...over,
      });

      it('registers a wait once: a second registration keeps the first', async () => {
        const w = wait();
        await waitsRepo.insertIfAbsent(store.db, w);
        await waitsRepo.insertIfAbsent(store.db, { ...w, expires_at: iso(120_000) });
        expect(await waitsRepo.get(store.db, w.execution_id, w.step)).toEqual(w);
        expect(await waitsRepo.ofExecution(store.db, w.execution_id)).toEqual([w]);
      });

      it('of concurrent resumes exactly one wins, each in its own transaction', async () => {
        const w = wait();
        await waitsRepo.insertIfAbsent(store.db, w);
        const won = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.transaction((trx) => waitsRepo.resume(trx, w.execution_id, w.step, `{"n":${i}}`, iso())),
          ),
        );
        expect(won.filter(Boolean)).toHaveLength(1);
        const row = await waitsRepo.get(store.db, w.execution_id, w.step);
        expect(row).toMatchObject({ status: 'resumed', item: `{"n":${won.indexOf(true)}}` });
        // Resumed: it neither times out nor resumes again.
        expect(await waitsRepo.timeOut(store.db, w.execution_id, w.step, iso())).toBe(false);
        expect(await waitsRepo.resume(store.db, w.execution_id, w.step, '{}', iso())).toBe(false);
      });

      it('lists event waits by watched workflow; a timed-out one no longer counts', async () => {
        const a = wait({
          kind: 'event',
          workflow_id: 'wf-stripe',
          match: '{{ body.id }}',
          match_key: 'pi_1',
        });
        const b = wait({
          kind: 'event',
          workflow_id: 'wf-stripe',
          match: '{{ body.id }}',
          match_key: 'pi_2',
        });
        const c = wait({ kind: 'event', workflow_id: 'wf-github', match: '{{ body.id }}', match_key: 'x' });
        for (const w of [a, b, c, wait()]) await waitsRepo.insertIfAbsent(store.db, w);
        expect((await waitsRepo.watched(store.db)).sort()).toEqual(['wf-github', 'wf-stripe']);
        expect((await waitsRepo.waitingOn(store.db, 'wf-stripe')).map((w) => w.match_key).sort()).toEqual([
          'pi_1',
          'pi_2',
        ]);
        expect(await waitsRepo.timeOut(store.db, c.execution_id, c.step, iso())).toBe(true);
        expect(await waitsRepo.watched(store.db)).toEqual(['wf-stripe']);
      });

      it('productionSince: production requests of a workflow from a time on, oldest first', async () => {
        const before = execution({ workflow_id: 'wf-w', mode: 'production' });
        await executionsRepo.insert(store.db, before);
        await sleep(5);
        const from = Date.now();
        await sleep(2);
        const rows = [
          execution({ workflow_id: 'wf-w', mode: 'production' }),
          execution({ workflow_id: 'wf-w', mode: 'test' }),
          execution({ workflow_id: 'wf-other', mode: 'production' }),
          execution({ workflow_id: 'wf-w', mode: 'production' }),
        ];
        for (const r of rows) await executionsRepo.insert(store.db, r);
        const found = await waitsRepo.productionSince(store.db, 'wf-w', from, 10);
        expect(found.map((r) => r.id)).toEqual([rows[0]!.id, rows[3]!.id]);
        expect(idFloor(from) <= (rows[0]!.id as string)).toBe(true);
        expect(idFloor(from) > (before.id as string)).toBe(true);
      });

      it('a finished execution deleted by retention takes its waits along', async () => {
        const row = execution({ status: 'succeeded', finished_at: iso() });
        await executionsRepo.insert(store.db, row);
        await waitsRepo.insertIfAbsent(store.db, wait({ execution_id: row.id as string, status: 'resumed' }));
        await store.transaction((trx) =>
          executionsRepo.deleteFinishedRange(trx, row.id as string, row.id as string),
        );
        expect(await waitsRepo.ofExecution(store.db, row.id as string)).toEqual([]);
      });
    });

    describe('executionsRepo', () => {
      // Two workflows × statuses × modes, inserted in id order so "newest first" is the reverse.
      const fixture = (): NewExecutionRow[] => {
        const spec: [string, ExecutionRow['status'], ExecutionRow['mode']][] = [
          ['wf-a', 'queued', 'production'],
          ['wf-a', 'succeeded', 'test'],
          ['wf-b', 'failed', 'production'],
          ['wf-a', 'failed', 'production'],
          ['wf-b', 'queued', 'test'],
          ['wf-a', 'queued', 'production'],
          ['wf-b', 'filtered', 'production'],
        ];
        const rowIds = ids(spec.length);
        return spec.map(([workflow_id, status, mode], i) =>
          execution({ id: rowIds[i]!, workflow_id, status, mode }),
        );
      };

      it('get returns every column as inserted', async () => {
        const row = execution({
          status: 'failed',
          error: JSON.stringify({ message: 'boom' }),
          attempt: 3,
          retry_of: newId(),
          locked_until: iso(5_000),
          locked_by: 'worker-1',
          started_at: iso(),
          finished_at: iso(10),
          steps: JSON.stringify([{ name: 'a', status: 'failed' }]),
        });
        await executionsRepo.insert(store.db, row);
        expect(await executionsRepo.get(store.db, row.id as string)).toEqual(row);
        expect(await executionsRepo.get(store.db, newId())).toBeUndefined();
      });

      it.each<[string, Omit<ExecutionFilter, 'limit' | 'before'>]>([
        ['no filter', {}],
        ['workflowId', { workflowId: 'wf-a' }],
        ['status', { status: 'failed' }],
        ['mode', { mode: 'test' }],
        ['workflowId + status + mode', { workflowId: 'wf-a', status: 'queued', mode: 'production' }],
        ['a filter nothing matches', { workflowId: 'wf-none' }],
      ])('list filters by %s, newest first', async (_case, filter) => {
        const rows = fixture();
        for (const row of rows) await executionsRepo.insert(store.db, row);
        const expected = rows
          .filter(
            (r) =>
              (!filter.workflowId || r.workflow_id === filter.workflowId) &&
              (!filter.status || r.status === filter.status) &&
              (!filter.mode || r.mode === filter.mode),
          )
          .map((r) => r.id as string)
          .reverse();

        const got = await executionsRepo.list(store.db, { ...filter, limit: 100 });

        expect(got.map((r) => r.id)).toEqual(expected);
      });

      it('list pages with limit and before, also under a filter', async () => {
        const rows = fixture();
        for (const row of rows) await executionsRepo.insert(store.db, row);
        const expected = rows
          .filter((r) => r.workflow_id === 'wf-a')
          .map((r) => r.id as string)
          .reverse();

        const page1 = await executionsRepo.list(store.db, { workflowId: 'wf-a', limit: 3 });
        const page2 = await executionsRepo.list(store.db, {
          workflowId: 'wf-a',
          limit: 3,
          before: page1.at(-1)?.id,
        });

        expect(page1.map((r) => r.id)).toEqual(expected.slice(0, 3));
        expect(page2.map((r) => r.id)).toEqual(expected.slice(3));
      });

      it('retriesOf gives the executions whose retry_of is the execution, oldest first, of its workflow only', async () => {
        const [original, other, retry1, unrelated, retry2] = ids(5);
        const rows = [
          execution({ id: original!, workflow_id: 'wf-a', status: 'failed' }),
          execution({ id: other!, workflow_id: 'wf-b', status: 'failed' }),
          execution({ id: retry1!, workflow_id: 'wf-a', status: 'failed', retry_of: original! }),
          execution({ id: unrelated!, workflow_id: 'wf-a', status: 'succeeded' }),
          execution({ id: retry2!, workflow_id: 'wf-a', status: 'succeeded', retry_of: original! }),
        ];
        for (const row of rows) await executionsRepo.insert(store.db, row);
        expect(await executionsRepo.retriesOf(store.db, { id: original!, workflow_id: 'wf-a' })).toEqual([
          retry1,
          retry2,
        ]);
        expect(await executionsRepo.retriesOf(store.db, { id: original!, workflow_id: 'wf-a' }, 1)).toEqual([
          retry1,
        ]);
        // A retry of a retry belongs to the retry it repeats.
        expect(await executionsRepo.retriesOf(store.db, { id: retry1!, workflow_id: 'wf-a' })).toEqual([]);
        expect(await executionsRepo.retriesOf(store.db, { id: other!, workflow_id: 'wf-b' })).toEqual([]);
      });

      it.each<[ExecutionRow['status'], number]>([
        ['queued', 3],
        ['running', 0],
        ['succeeded', 1],
        ['failed', 2],
        ['filtered', 1],
      ])('count(%s) is %i as a number', async (status, n) => {
        for (const row of fixture()) await executionsRepo.insert(store.db, row);
        const got = await executionsRepo.count(store.db, status);
        expect(got).toBe(n);
        expect(typeof got).toBe('number');
      });
    });

    describe('blobs', () => {
      const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
      it.each<[string, () => Uint8Array]>([
        ['all 256 byte values (Uint8Array)', () => allBytes],
        ['all 256 byte values (Buffer)', () => Buffer.from(allBytes)],
        [
          'all 256 byte values, reversed, at an offset into a larger buffer',
          () => {
            const backing = new Uint8Array(1024);
            const view = backing.subarray(100, 356);
            view.set([...allBytes].reverse());
            return view;
          },
        ],
        ['1 MiB of random bytes', () => randomBytes(1024 * 1024)],
        ['empty', () => new Uint8Array(0)],
      ])('round-trips %s byte-identically', async (_case, make) => {
        const data = make();
        const sha256 = createHash('sha256').update(data).digest('hex');
        const row: NewBlobRow = {
          id: newId(),
          execution_id: newId(),
          sha256,
          size: data.byteLength,
          mime_type: 'application/octet-stream',
          filename: 'bytes.bin',
          data,
          created_at: iso(),
        };
        await store.db.insertInto('blobs').values(row).execute();

        const got = await store.db
          .selectFrom('blobs')
          .selectAll()
          .where('id', '=', row.id)
          .executeTakeFirstOrThrow();

        expect(got.data).toBeInstanceOf(Uint8Array);
        expect(got.data.byteLength).toBe(data.byteLength);
        expect(
          Buffer.compare(Buffer.from(got.data), Buffer.from(data.buffer, data.byteOffset, data.byteLength)),
        ).toBe(0);
        expect(createHash('sha256').update(got.data).digest('hex')).toBe(sha256);
        expect({ ...got, data: undefined }).toEqual({ ...row, data: undefined });
      });
    });

    describe('blobFiles: a file stored as it arrives, read part by part', () => {
      it('stores parts, is unreadable until finished, and reads back byte for byte', async () => {
        const id = newId();
        const executionId = newId();
        await blobFiles.begin(store.db, {
          id,
          execution_id: executionId,
          filename: 'r.bin',
          mime_type: 'application/pdf',
          created_at: iso(),
        });
        const pending = await blobFiles.row(store.db, id);
        expect(pending).toMatchObject({ size: 0, sha256: '', execution_id: executionId });
        const parts = [randomBytes(BLOB_PART_BYTES), randomBytes(BLOB_PART_BYTES), randomBytes(12_345)];
        for (const [seq, data] of parts.entries()) await blobFiles.append(store.db, id, seq, data);
        const all = Buffer.concat(parts);
        const sha256 = createHash('sha256').update(all).digest('hex');
        await blobFiles.finish(store.db, id, all.length, sha256);
        const row = (await blobFiles.row(store.db, id))!;
        expect(row).toMatchObject({ size: all.length, sha256 });
        expect(blobFiles.partCount(row)).toBe(3);
        const read: Buffer[] = [];
        for await (const chunk of blobFiles.chunks(store.db, row)) read.push(Buffer.from(chunk));
        expect(Buffer.compare(Buffer.concat(read), all)).toBe(0);
        // The whole-file read agrees.
        expect(Buffer.compare(Buffer.from((await blobsRepo.get(store.db, id))!.data), all)).toBe(0);
        expect(await blobFiles.part(store.db, row, 3)).toBeUndefined();
      });
    });

    describe('variablesRepo', () => {
      const variable = (name: string, over: Partial<VariableRow> = {}): VariableRow => ({
        name,
        value: `value of ${name}`,
        secret: 0,
        created_at: iso(),
        updated_at: iso(),
        ...over,
      });

      it('puts (insert, then replace keeping created_at), lists by name, gets and deletes', async () => {
        await variablesRepo.put(store.db, variable('B_VAR'));
        const first = variable('A_VAR', { created_at: '2026-01-01T00:00:00.000Z' });
        await variablesRepo.put(store.db, first);
        await variablesRepo.put(
          store.db,
          variable('A_VAR', { value: 'sealed', secret: 1, updated_at: '2026-02-01T00:00:00.000Z' }),
        );
        expect((await variablesRepo.list(store.db)).map((v) => v.name)).toEqual(['A_VAR', 'B_VAR']);
        expect(await variablesRepo.get(store.db, 'A_VAR')).toEqual({
          name: 'A_VAR',
          value: 'sealed',
          secret: 1,
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-02-01T00:00:00.000Z',
        });
        expect(await variablesRepo.listSecret(store.db)).toEqual([{ name: 'A_VAR', value: 'sealed' }]);
        await variablesRepo.setValue(store.db, 'A_VAR', 'resealed');
        expect((await variablesRepo.get(store.db, 'A_VAR'))?.value).toBe('resealed');
        expect(await variablesRepo.delete(store.db, 'A_VAR')).toBe(true);
        expect(await variablesRepo.delete(store.db, 'A_VAR')).toBe(false);
        expect(await variablesRepo.get(store.db, 'A_VAR')).toBeUndefined();
      });
    });

    describe('Queue', () => {
      const insertAll = async (rows: NewExecutionRow[]) => {
        for (const row of rows) await executionsRepo.insert(store.db, row);
      };
      const get = (id: string) => executionsRepo.get(store.db, id);

      it('claim returns due queued rows oldest first, up to limit, and marks them running under a lease', async () => {
        const rowIds = ids(3);
        // Inserted out of order, due at the same time: the claim order must come from the ids, not the insert order.
        const due = iso(-1_000);
        await insertAll([rowIds[2]!, rowIds[0]!, rowIds[1]!].map((id) => execution({ id, run_after: due })));
        const queue = new Queue({ store, workerId: 'w1' });
        const before = Date.now();

        const first = await queue.claim(2);
        const after = Date.now();

        expect(first.map((r) => r.id)).toEqual(rowIds.slice(0, 2));
        for (const row of first) {
          expect(row).toMatchObject({ status: 'running', locked_by: 'w1', attempt: 1 });
          const until = Date.parse(row.locked_until ?? '');
          expect(until).toBeGreaterThanOrEqual(before + LEASE_MS);
          expect(until).toBeLessThanOrEqual(after + LEASE_MS);
          expect(Date.parse(row.started_at ?? '')).toBeGreaterThanOrEqual(before);
          expect(await get(row.id)).toEqual(row);
        }
        expect((await queue.claim(10)).map((r) => r.id)).toEqual([rowIds[2]]);
        expect(await queue.claim(10)).toEqual([]);
      });

      it('claim with maxChars takes the oldest rows while those before total less than it: at least one', async () => {
        const rowIds = ids(5);
        // Trigger JSON of 100, 300, 50, 10 and 10 characters, due oldest first in id order.
        const sizes = [100, 300, 50, 10, 10];
        await insertAll(
          rowIds.map((id, i) => execution({ id, trigger: JSON.stringify({ s: 'x'.repeat(sizes[i]! - 8) }) })),
        );
        const queue = new Queue({ store, workerId: 'w1' });
        // 100 < 150, then 100 + 300 ≥ 150: the claim stops after the second row, which it takes whole.
        const first = await queue.claim(10, { maxChars: 150 });
        expect(first.map((r) => r.id)).toEqual(rowIds.slice(0, 2));
        expect(first.map((r) => r.trigger.length)).toEqual([100, 300]);
        // One row alone over the cap is still taken (nothing could ever take it otherwise).
        expect((await queue.claim(10, { maxChars: 1 })).map((r) => r.id)).toEqual([rowIds[2]]);
        // The limit still holds within the cap.
        expect((await queue.claim(1, { maxChars: 1_000 })).map((r) => r.id)).toEqual([rowIds[3]]);
        expect((await queue.claim(10, { maxChars: 1_000 })).map((r) => r.id)).toEqual([rowIds[4]]);
        for (const id of rowIds) expect(await get(id)).toMatchObject({ status: 'running', locked_by: 'w1' });
      });

      it('backlog counts the due queued and waiting rows, and gives the earliest due time among them', async () => {
        const now = iso();
        expect(await queueRepo.backlog(store, now)).toEqual({ depth: 0, oldestDueAt: undefined });
        const waitingSince = iso(-9_000);
        await insertAll([
          execution({ run_after: iso(-5_000) }),
          execution({ run_after: iso(-1_000) }),
          execution({ status: 'waiting', run_after: waitingSince }),
          // Not due, or not the queue's to take:
          execution({ run_after: iso(60_000) }),
          execution({ status: 'waiting', run_after: iso(60_000) }),
          execution({
            status: 'running',
            locked_by: 'w1',
            locked_until: iso(60_000),
            run_after: iso(-20_000),
          }),
          execution({ status: 'succeeded', run_after: iso(-30_000) }),
        ]);
        expect(await queueRepo.backlog(store, iso())).toEqual({ depth: 3, oldestDueAt: waitingSince });
        // The earliest due row is a queued one once the waiting one is taken.
        await store.db.deleteFrom('executions').where('run_after', '=', waitingSince).execute();
        expect(await queueRepo.backlog(store, iso())).toMatchObject({ depth: 2 });
        expect(Date.parse((await queueRepo.backlog(store, iso())).oldestDueAt!)).toBeLessThan(
          Date.now() - 4_000,
        );
      });

      it('claim takes the execution due earliest first, like graphile-worker (run_at, id)', async () => {
        const [older, newer] = ids(2);
        await insertAll([
          execution({ id: older, run_after: iso(-1_000) }),
          execution({ id: newer, run_after: iso(-5_000) }),
        ]);
        const queue = new Queue({ store, workerId: 'w1' });
        expect((await queue.claim(1)).map((r) => r.id)).toEqual([newer]);
        expect((await queue.claim(1)).map((r) => r.id)).toEqual([older]);
      });

      it.each<[string, Partial<NewExecutionRow>]>([
        ['queued with run_after in the future (backoff)', { run_after: iso(60_000) }],
        [
          'running under a live lease',
          { status: 'running', locked_by: 'w-other', locked_until: iso(60_000) },
        ],
        ['succeeded', { status: 'succeeded' }],
        ['failed', { status: 'failed' }],
        ['filtered', { status: 'filtered' }],
      ])('claim does not return a row that is %s', async (_case, overrides) => {
        const row = execution(overrides);
        await insertAll([row]);

        expect(await new Queue({ store, workerId: 'w1' }).claim(10)).toEqual([]);
        expect(await get(row.id as string)).toEqual(row);
      });

      it('two workers claiming concurrently never get the same row', async () => {
        const rows = ids(50).map((id) => execution({ id }));
        await insertAll(rows);
        const workers = [new Queue({ store, workerId: 'w1' }), new Queue({ store, workerId: 'w2' })];
        const claimedBy = new Map<string, string[]>();

        const loop = async (queue: Queue, workerId: string) => {
          for (;;) {
            const got = await queue.claim(3);
            if (got.length === 0) return;
            for (const row of got) claimedBy.set(row.id, [...(claimedBy.get(row.id) ?? []), workerId]);
          }
        };
        // Two parallel claim loops per worker, so claims of one worker also race each other.
        await Promise.all(workers.flatMap((q, i) => [loop(q, `w${i + 1}`), loop(q, `w${i + 1}`)]));

        expect([...claimedBy.keys()].sort()).toEqual(rows.map((r) => r.id));
        for (const [id, by] of claimedBy) {
          expect(by, `row ${id} claimed by ${by.join(', ')}`).toHaveLength(1);
          expect(await get(id)).toMatchObject({ status: 'running', locked_by: by[0], attempt: 1 });
        }
      });

      it('a running row whose lease lapsed is claimed again as the next attempt', async () => {
        const row = execution({
          status: 'running',
          locked_by: 'w-dead',
          locked_until: iso(-1_000),
          attempt: 1,
        });
        await insertAll([row]);

        const [claimed, ...rest] = await new Queue({ store, workerId: 'w1' }).claim(10);

        expect(rest).toEqual([]);
        expect(claimed).toMatchObject({ id: row.id, status: 'running', locked_by: 'w1', attempt: 2 });
        expect(Date.parse(claimed?.locked_until ?? '')).toBeGreaterThan(Date.now());
      });

      it('heartbeat extends the lease of its own rows only', async () => {
        const [own, foreign] = ids(2).map((id) =>
          execution({ id, status: 'running', locked_until: iso(1_000) }),
        );
        await insertAll([
          { ...own!, locked_by: 'w1' },
          { ...foreign!, locked_by: 'w2' },
        ]);
        const before = Date.now();

        await new Queue({ store, workerId: 'w1' }).heartbeat([own!.id as string, foreign!.id as string]);

        expect(Date.parse((await get(own!.id as string))?.locked_until ?? '')).toBeGreaterThanOrEqual(
          before + LEASE_MS,
        );
        expect((await get(foreign!.id as string))?.locked_until).toBe(foreign!.locked_until);
      });

      it('heartbeat with no ids changes nothing', async () => {
        const row = execution({ status: 'running', locked_by: 'w1', locked_until: iso(1_000) });
        await insertAll([row]);
        await new Queue({ store, workerId: 'w1' }).heartbeat([]);
        expect(await get(row.id as string)).toEqual(row);
      });

      it.each<[string, ExecutionResult, string | null]>([
        [
          'succeeded',
          { status: 'succeeded', steps: [{ name: 'a', output: { ok: true } }], error: undefined },
          null,
        ],
        ['filtered', { status: 'filtered', steps: [], error: null }, null],
        [
          'failed',
          { status: 'failed', steps: [{ name: 'a', error: 'boom' }], error: { message: 'boom' } },
          JSON.stringify({ message: 'boom' }),
        ],
      ])('complete records a %s result and clears the lock', async (_case, result, storedError) => {
        await insertAll([execution()]);
        const queue = new Queue({ store, workerId: 'w1' });
        const [claimed] = await queue.claim(1);
        const before = Date.now();

        await queue.complete(claimed!.id, result);

        const row = await get(claimed!.id);
        expect(row).toMatchObject({
          status: result.status,
          steps: JSON.stringify(result.steps),
          error: storedError,
          locked_by: null,
          locked_until: null,
          started_at: claimed!.started_at,
          attempt: 1,
        });
        expect(Date.parse(row?.finished_at ?? '')).toBeGreaterThanOrEqual(before);
        expect(await queue.claim(10)).toEqual([]);
      });

      it('releaseAbandoned makes every running row claimable now, as the next attempt (or gives up on the last)', async () => {
        const running = ids(2).map((id, i) =>
          execution({ id, status: 'running', locked_by: `w-gone-${i}`, locked_until: iso(60_000) }),
        );
        const exhausted = execution({
          id: newId(),
          status: 'running',
          attempt: MAX_ATTEMPTS,
          locked_by: 'w-gone',
          locked_until: iso(60_000),
        });
        const queued = execution({ id: newId() });
        const done = execution({ id: newId(), status: 'succeeded' });
        await insertAll([...running, exhausted, queued, done]);
        const queue = new Queue({ store, workerId: 'w1' });

        expect(await queue.releaseAbandoned()).toBe(3);
        expect(await get(exhausted.id as string)).toMatchObject({ status: 'failed', locked_by: null });

        const claimed = await queue.claim(10);
        expect(claimed.map((r) => [r.id, r.attempt, r.locked_by])).toEqual(
          [...running.map((r) => [r.id, 2, 'w1']), [queued.id, 1, 'w1']].sort((a, b) =>
            String(a[0]).localeCompare(String(b[0])),
          ),
        );
        expect((await get(done.id as string))?.status).toBe('succeeded');
      });
    });

    describe('Queue: concurrency keys (SPEC 7d)', () => {
      const insertAll = async (rows: NewExecutionRow[]) => {
        for (const row of rows) await executionsRepo.insert(store.db, row);
      };
      const get = (id: string) => executionsRepo.get(store.db, id);
      const keyed = (id: string, key: string, more: Partial<NewExecutionRow> = {}) =>
        execution({ id, concurrency_key: key, concurrency_limit: 1, ...more });
      const succeed = (queue: Queue, id: string) =>
        queue.complete(id, { status: 'succeeded', steps: [], error: null });
      const claimedIds = async (queue: Queue, limit = 10) => (await queue.claim(limit)).map((r) => r.id);

      it('starts one execution of a key at a time, in the order accepted, without holding back other keys or unkeyed rows', async () => {
        const [a1, b1, a2, u, a3, b2] = ids(6);
        await insertAll([
          keyed(a1!, 'a'),
          keyed(b1!, 'b'),
          keyed(a2!, 'a'),
          execution({ id: u! }),
          keyed(a3!, 'a'),
          keyed(b2!, 'b'),
        ]);
        const queue = new Queue({ store, workerId: 'w1' });
        expect(await claimedIds(queue)).toEqual([a1, b1, u]);
        // Nothing more while the heads run.
        expect(await claimedIds(queue)).toEqual([]);
        expect(await succeed(queue, a1!)).toBe(true);
        expect(await claimedIds(queue)).toEqual([a2]);
        expect(await succeed(queue, b1!)).toBe(true);
        expect(await succeed(queue, a2!)).toBe(true);
        expect((await claimedIds(queue)).sort()).toEqual([a3, b2].sort());
      });

      it('a limit of 2 runs two of a key at once, the third when one ends', async () => {
        const [x1, x2, x3] = ids(3);
        await insertAll([x1!, x2!, x3!].map((id) => keyed(id, 'k', { concurrency_limit: 2 })));
        const queue = new Queue({ store, workerId: 'w1' });
        expect(await claimedIds(queue)).toEqual([x1, x2]);
        expect(await claimedIds(queue)).toEqual([]);
        await succeed(queue, x2!);
        expect(await claimedIds(queue)).toEqual([x3]);
      });

      it('keys are per workflow: the same key value in two workflows does not wait', async () => {
        const [p, q] = ids(2);
        await insertAll([
          keyed(p!, 'same', { workflow_id: 'wf-p' }),
          keyed(q!, 'same', { workflow_id: 'wf-q' }),
        ]);
        expect(await claimedIds(new Queue({ store, workerId: 'w1' }))).toEqual([p, q]);
      });

      it('a head queued again for later (a backoff, a lapsed lease) keeps its turn: the rows behind it wait', async () => {
        const [a1, a2] = ids(2);
        await insertAll([keyed(a1!, 'a', { run_after: iso(60_000), attempt: 2 }), keyed(a2!, 'a')]);
        expect(await claimedIds(new Queue({ store, workerId: 'w1' }))).toEqual([]);
        // A running head whose worker died: released (lease lapsed), it runs again before a2.
        await store.db
          .updateTable('executions')
          .set({ status: 'running', locked_by: 'w-gone', locked_until: iso(-1_000), run_after: iso(-5_000) })
          .where('id', '=', a1!)
          .execute();
        const queue = new Queue({ store, workerId: 'w1' });
        expect(await claimedIds(queue)).toEqual([a1]);
        expect(await get(a1!)).toMatchObject({ status: 'running', locked_by: 'w1', attempt: 3 });
      });

      it('a waiting execution holds its key: the next of the key starts once it ends, and it resumes itself', async () => {
        const [a1, a2] = ids(2);
        await insertAll([
          keyed(a1!, 'a', { status: 'waiting', run_after: iso(60_000), started_at: iso(-1_000) }),
          keyed(a2!, 'a'),
        ]);
        const queue = new Queue({ store, workerId: 'w1' });
        expect(await claimedIds(queue)).toEqual([]);
        await store.db
          .updateTable('executions')
          .set({ run_after: iso(-1) })
          .where('id', '=', a1!)
          .execute();
        expect(await claimedIds(new Queue({ store, workerId: 'w2' }))).toEqual([a1]);
      });

      it('keyed rows are never taken by the plain claim nor by a batch', async () => {
        const [a1, u] = ids(2);
        await insertAll([keyed(a1!, 'a'), execution({ id: u! })]);
        const claim = {
          status: 'running' as const,
          locked_by: 'w1',
          locked_until: iso(60_000),
          started_at: iso(),
        };
        expect((await queueRepo.claimDue(store, 'queued', iso(), 10, claim)).map((r) => r.id)).toEqual([u]);
        await store.db.updateTable('executions').set({ status: 'queued' }).where('id', '=', u!).execute();
        if (store.caps.skipLocked) {
          const seen: string[] = [];
          await queueRepo.batchQueued(store, iso(), 10, claim, async (rows) => {
            seen.push(...rows.map((r) => r.id));
            return { finished: [], claimed: [] };
          });
          expect(seen).toEqual([u]);
        }
      });

      it('two workers claiming at once never start two of one key', async () => {
        const rows = ids(20).map((id, i) => keyed(id, `k${i % 4}`));
        await insertAll(rows);
        const workers = [new Queue({ store, workerId: 'w1' }), new Queue({ store, workerId: 'w2' })];
        const got = (await Promise.all(workers.map((w) => w.claim(10)))).flat();
        // The four heads, one per key, each to one worker.
        expect(got.map((r) => r.id).sort()).toEqual(rows.slice(0, 4).map((r) => r.id));
        expect(new Set(got.map((r) => r.concurrency_key)).size).toBe(4);
      });

      it('newest wins: a value lower than one of its key that started is skipped; equal values and no value both run', async () => {
        const [n10, n5, n10b, none, n12] = ids(5);
        await insertAll([
          keyed(n10!, 'c', { newest_value: 10 }),
          keyed(n5!, 'c', { newest_value: 5 }),
          keyed(n10b!, 'c', { newest_value: 10 }),
          keyed(none!, 'c', { newest_value: null }),
          keyed(n12!, 'c', { newest_value: 12 }),
        ]);
        const queue = new Queue({ store, workerId: 'w1' });
        const skipped: string[] = [];
        queue.onSkipped((rows) => skipped.push(...rows.map((r) => r.id)));
        expect(await claimedIds(queue)).toEqual([n10]);
        expect(await queueRepo.concurrencyMark(store.db, 'wf-a', 'c')).toBe(10);
        await succeed(queue, n10!);
        // n5 is lower than the 10 that started: skipped without running, and the next one starts in
        // the same claim (a skip frees the key's turn at once).
        expect(await claimedIds(queue)).toEqual([n10b]);
        expect(skipped).toEqual([n5]);
        const s = await get(n5!);
        expect(s).toMatchObject({
          status: 'skipped',
          skip_reason: 'superseded',
          locked_by: null,
          steps: '[]',
        });
        expect(s?.finished_at).not.toBeNull();
        await succeed(queue, n10b!);
        expect(await claimedIds(queue)).toEqual([none]);
        await succeed(queue, none!);
        expect(await claimedIds(queue)).toEqual([n12]);
        expect(await queueRepo.concurrencyMark(store.db, 'wf-a', 'c')).toBe(12);
      });

      it('newest wins holds when the newer execution is gone (retention): the mark is kept apart', async () => {
        const [newer, older] = ids(2);
        await insertAll([keyed(newer!, 'd', { newest_value: 2_000 })]);
        const queue = new Queue({ store, workerId: 'w1' });
        expect(await claimedIds(queue)).toEqual([newer]);
        await succeed(queue, newer!);
        await store.db.deleteFrom('executions').where('id', '=', newer!).execute();
        await insertAll([keyed(older!, 'd', { newest_value: 1_000 })]);
        expect(await claimedIds(queue)).toEqual([]);
        expect(await get(older!)).toMatchObject({ status: 'skipped', skip_reason: 'superseded' });
      });

      it('with a limit above 1, of rows of one key taken together the later lower one is skipped', async () => {
        const [hi, lo] = ids(2);
        await insertAll([
          keyed(hi!, 'e', { newest_value: 7, concurrency_limit: 5 }),
          keyed(lo!, 'e', { newest_value: 3, concurrency_limit: 5 }),
        ]);
        const queue = new Queue({ store, workerId: 'w1' });
        expect(await claimedIds(queue)).toEqual([hi]);
        expect(await get(lo!)).toMatchObject({ status: 'skipped' });
      });

      it('setConcurrency gives an inserted execution its key, limit and value', async () => {
        const row = execution();
        await store.transaction(async (trx) => {
          await executionsRepo.insert(trx, row);
          await queueRepo.setConcurrency(trx, row.id as string, { key: 'cus_1', limit: 3, newest: 1.5 });
        });
        expect(await get(row.id as string)).toMatchObject({
          concurrency_key: 'cus_1',
          concurrency_limit: 3,
          newest_value: 1.5,
        });
      });
    });

    describe('transaction', () => {
      it('commits and returns the value of fn', async () => {
        const w = workflow();
        const result = await store.transaction(async (trx) => {
          await workflowsRepo.insert(trx, w);
          return 'done';
        });
        expect(result).toBe('done');
        expect(await workflowsRepo.get(store.db, w.id)).toEqual(w);
      });

      it('rolls back every write when fn throws, and rethrows', async () => {
        const w = workflow();
        const boom = new Error('boom');
        await expect(
          store.transaction(async (trx) => {
            await workflowsRepo.insert(trx, w);
            await executionsRepo.insert(trx, execution({ workflow_id: w.id }));
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await workflowsRepo.get(store.db, w.id)).toBeUndefined();
        expect(await workflowsRepo.getVersion(store.db, w.id, 1)).toBeUndefined();
        expect(await executionsRepo.list(store.db, { workflowId: w.id, limit: 10 })).toEqual([]);
      });

      /**
       * Starts transaction A, waits until A is inside fn, then starts B. Each records when its fn
       * ran (performance.now()) and inserts a workflow, so the caller can check both committed.
       */
      async function pair(lockA: string | undefined, lockB: string | undefined) {
        const HOLD_MS = 150;
        let entered!: () => void;
        const aInside = new Promise<void>((resolve) => {
          entered = resolve;
        });
        const run = (lock: string | undefined, hold: number, onEnter?: () => void) =>
          store.transaction(
            async (trx) => {
              const start = performance.now();
              onEnter?.();
              const w = workflow();
              await workflowsRepo.insert(trx, w);
              await sleep(hold);
              return { id: w.id, start, end: performance.now() };
            },
            lock === undefined ? undefined : { lock },
          );
        const a = run(lockA, HOLD_MS, entered);
        await aInside;
        const b = run(lockB, 0);
        return Promise.all([a, b]);
      }

      it('two transactions with the same lock run one after the other', async () => {
        const lock = `test:${newId()}`;
        const [a, b] = await pair(lock, lock);

        // B's fn may only start once A has committed and released the lock.
        expect(b.start).toBeGreaterThanOrEqual(a.end);
        expect(await workflowsRepo.get(store.db, a.id)).toBeDefined();
        expect(await workflowsRepo.get(store.db, b.id)).toBeDefined();
      });

      it('transactions under different locks both commit (and overlap where there are several connections)', async () => {
        const [a, b] = await pair(`test:${newId()}`, `test:${newId()}`);

        expect(await workflowsRepo.get(store.db, a.id)).toBeDefined();
        expect(await workflowsRepo.get(store.db, b.id)).toBeDefined();
        // The control for the test above: on PostgreSQL only the lock makes B wait. SQLite has one
        // connection and one writer, so there every transaction waits for the previous one.
        if (store.caps.name === 'postgres') expect(b.end).toBeLessThan(a.end);
      });
    });

    describe('writeHot', () => {
      it('inserts and completes in one batch; a completion whose lock is not held is not recorded', async () => {
        const [a, b, c] = ids(3);
        const running = execution({ id: a!, status: 'running', locked_by: 'w1', locked_until: iso(30_000) });
        await executionsRepo.insert(store.db, running);
        const inserted = execution({ id: b!, trigger: JSON.stringify({ body: { n: 'ü' } }) });
        const completion = (id: string, lockedBy: string) => ({
          kind: 'complete' as const,
          completion: {
            id,
            lockedBy,
            status: 'succeeded' as const,
            steps: '[{"name":"s"}]',
            error: null,
            finishedAt: iso(),
            runAfter: null,
            resumeState: null,
          },
        });
        const results = await store.writeHot([
          { kind: 'insert', row: inserted },
          completion(a!, 'w1'),
          completion(c!, 'w1'), // no such execution
          completion(b!, 'w2'), // queued, not locked by w2
        ]);
        expect(results).toEqual([true, true, false, false]);
        expect(await executionsRepo.get(store.db, b!)).toEqual(inserted);
        expect(await executionsRepo.get(store.db, a!)).toMatchObject({
          status: 'succeeded',
          steps: '[{"name":"s"}]',
          locked_by: null,
          locked_until: null,
        });
      });

      it('a batch of 600 inserts stores every row with every column as given (nulls, quotes, backslashes, non-ASCII)', async () => {
        const rowIds = ids(600);
        const rows = rowIds.map((id, i) =>
          i % 2 === 0
            ? execution({
                id,
                trigger: JSON.stringify({ body: { q: 'a "quoted" \\ {brace}, NULL', n: i, u: 'ü€😀' } }),
              })
            : execution({
                id,
                status: 'running',
                mode: 'test',
                workflow_version: 7,
                attempt: 3,
                error: '{"message":"x"}',
                retry_of: newId(),
                locked_until: iso(30_000),
                locked_by: 'w1',
                started_at: iso(),
                finished_at: null,
                warnings: '[{"path":"/a"}]',
              }),
        );
        const results = await store.writeHot(rows.map((row) => ({ kind: 'insert' as const, row })));
        expect(results).toEqual(rows.map(() => true));
        for (const row of [rows[0]!, rows[1]!, rows[598]!, rows[599]!])
          expect(await executionsRepo.get(store.db, row.id as string)).toEqual(row);
        const count = await store.db
          .selectFrom('executions')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow();
        expect(Number(count.n)).toBe(600);
      });

      it('completions in one batch: each reports whether it was recorded, in order; a waiting one keeps its checkpoint and due time', async () => {
        const rowIds = ids(4);
        for (const id of rowIds)
          await executionsRepo.insert(
            store.db,
            execution({
              id,
              status: 'running',
              locked_by: id === rowIds[2] ? 'w2' : 'w1',
              locked_until: iso(30_000),
            }),
          );
        const resumeAt = iso(60_000);
        const done = (id: string, over: Partial<ExecutionCompletion> = {}) => ({
          kind: 'complete' as const,
          completion: {
            id,
            lockedBy: 'w1',
            status: 'failed' as const,
            steps: '[]',
            error: '{"message":"boom"}',
            finishedAt: iso(),
            runAfter: null,
            resumeState: null,
            ...over,
          },
        });
        const results = await store.writeHot([
          done(rowIds[3]!),
          done(rowIds[0]!, {
            status: 'waiting',
            error: null,
            finishedAt: null,
            runAfter: resumeAt,
            resumeState: '{"step":1}',
          }),
          done(rowIds[2]!), // held by w2
          done(rowIds[1]!),
        ]);
        expect(results).toEqual([true, true, false, true]);
        expect(await executionsRepo.get(store.db, rowIds[0]!)).toMatchObject({
          status: 'waiting',
          run_after: resumeAt,
          resume_state: '{"step":1}',
          finished_at: null,
          locked_by: null,
        });
        expect(await executionsRepo.get(store.db, rowIds[1]!)).toMatchObject({
          status: 'failed',
          error: '{"message":"boom"}',
          locked_by: null,
          locked_until: null,
        });
        expect(await executionsRepo.get(store.db, rowIds[2]!)).toMatchObject({
          status: 'running',
          locked_by: 'w2',
        });
      });

      it('a park appends its checkpoint part only while its lock is held; a finish after a resume deletes the parts', async () => {
        const [a, b, c] = ids(3);
        for (const id of [a!, b!])
          await executionsRepo.insert(
            store.db,
            execution({ id, status: 'running', locked_by: 'w1', locked_until: iso(30_000) }),
          );
        const park = (id: string, seq: number, lockedBy = 'w1'): ExecutionCompletion => ({
          id,
          lockedBy,
          status: 'waiting',
          steps: '[]',
          error: null,
          finishedAt: null,
          runAfter: iso(60_000),
          resumeState: `{"parts":${seq}}`,
          checkpointPart: { seq, state: `{"s":${seq}}`, records: `{"r":${seq}}` },
        });
        const finish = (id: string): ExecutionCompletion => ({
          id,
          lockedBy: 'w1',
          status: 'succeeded',
          steps: '[]',
          error: null,
          finishedAt: iso(),
          runAfter: null,
          resumeState: null,
          dropCheckpoint: true,
        });
        const part = (seq: number) => ({ state: `{"s":${seq}}`, records: `{"r":${seq}}` });
        const relock = (id: string) =>
          store.db
            .updateTable('executions')
            .set({ status: 'running', locked_by: 'w1' })
            .where('id', '=', id)
            .execute();
        // With an insert in the same batch (one statement on PostgreSQL); `b` is not w2's.
        const results = await store.writeHot([
          { kind: 'insert', row: execution({ id: c! }) },
          { kind: 'complete', completion: park(a!, 1) },
          { kind: 'complete', completion: park(b!, 1, 'w2') },
        ]);
        expect(results).toEqual([true, true, false]);
        expect(await executionsRepo.checkpointParts(store.db, a!)).toEqual([part(1)]);
        expect(await executionsRepo.checkpointParts(store.db, b!)).toEqual([]);
        expect(await executionsRepo.get(store.db, a!)).toMatchObject({
          status: 'waiting',
          resume_state: '{"parts":1}',
        });

        // Resumed and parked again through a transaction's statements (SQLite: the writer thread's fallback).
        await relock(a!);
        expect(await store.transaction((trx) => store.hot.completeExecutions(trx, [park(a!, 2)]))).toEqual([
          true,
        ]);
        expect(await executionsRepo.checkpointParts(store.db, a!)).toEqual([part(1), part(2)]);
        await relock(a!);
        expect(await store.writeHot([{ kind: 'complete', completion: finish(a!) }])).toEqual([true]);
        expect(await executionsRepo.checkpointParts(store.db, a!)).toEqual([]);
        expect(await executionsRepo.get(store.db, a!)).toMatchObject({
          status: 'succeeded',
          resume_state: null,
        });

        // The same through a transaction's statements.
        expect(await store.transaction((trx) => store.hot.completeExecutions(trx, [park(b!, 1)]))).toEqual([
          true,
        ]);
        expect(await executionsRepo.checkpointParts(store.db, b!)).toEqual([part(1)]);
        await relock(b!);
        expect(await store.transaction((trx) => store.hot.completeExecutions(trx, [finish(b!)]))).toEqual([
          true,
        ]);
        expect(await executionsRepo.checkpointParts(store.db, b!)).toEqual([]);
      });

      it('a failing write rolls back its whole batch and rejects', async () => {
        const [a, b] = ids(2);
        await executionsRepo.insert(store.db, execution({ id: a! }));
        await expect(
          store.writeHot([
            { kind: 'insert', row: execution({ id: b! }) },
            { kind: 'insert', row: execution({ id: a! }) }, // duplicate primary key
          ]),
        ).rejects.toThrow();
        expect(await executionsRepo.get(store.db, b!)).toBeUndefined();
      });
    });

    describe('StoreRateLimiter', () => {
      it('lets `requests` through per window, then answers the seconds until the window ends', async () => {
        const limiter = new StoreRateLimiter(store.db);
        const t0 = 1_700_000_000_000;
        expect(await limiter.take('production:a', 2, 10, t0)).toBe(0);
        expect(await limiter.take('production:a', 2, 10, t0 + 1_000)).toBe(0);
        expect(await limiter.take('production:a', 2, 10, t0 + 1_500)).toBe(9);
        expect(await limiter.take('production:a', 2, 10, t0 + 9_990)).toBe(1);
        // Another key has its own window.
        expect(await limiter.take('test:a', 2, 10, t0 + 2_000)).toBe(0);
        // The window ends 10 s after its first request: a new one starts with this request.
        expect(await limiter.take('production:a', 2, 10, t0 + 10_000)).toBe(0);
        expect(await limiter.take('production:a', 2, 10, t0 + 10_001)).toBe(0);
        expect(await limiter.take('production:a', 2, 10, t0 + 10_002)).toBe(10);
      });

      it('counts concurrent takes once each: exactly `requests` of them pass', async () => {
        const limiters = [new StoreRateLimiter(store.db), new StoreRateLimiter(store.db)];
        const now = Date.now();
        const waits = await Promise.all(
          Array.from({ length: 20 }, (_, i) => limiters[i % 2]!.take('production:b', 7, 60, now)),
        );
        expect(waits.filter((w) => w === 0)).toHaveLength(7);
        expect(waits.filter((w) => w === 60)).toHaveLength(13);
      });
    });

    describe('learned schemas via TestListeners.capture', () => {
      let listeners: TestListeners;

      beforeEach(() => {
        listeners = new TestListeners({ store, bus: new LocalBus(), baseUrl: 'http://hookflow.test' });
      });

      async function listening(keepListening: boolean) {
        const w = workflow();
        await workflowsRepo.insert(store.db, w);
        const { listenerId } = await listeners.open(w.id, { timeoutSeconds: 60, keepListening });
        return { workflowId: w.id, listenerId };
      }

      const capture = (
        target: { workflowId: string; listenerId: string },
        keepListening: boolean,
        item: unknown,
        receivedAt = iso(),
      ) =>
        store.transaction((trx) =>
          listeners.capture(trx, {
            ...target,
            keepListening,
            eventId: newId(),
            executionId: newId(),
            item,
            itemJson: JSON.stringify(item),
            receivedAt,
          }),
        );

      const eventCount = async (workflowId: string) =>
        (
          await store.db
            .selectFrom('test_events')
            .select('id')
            .where('workflow_id', '=', workflowId)
            .execute()
        ).length;

      const notListening = expect.objectContaining({ code: 'test_webhook_not_listening' });

      it('a one-shot listener is consumed by its first capture; a second capture is refused', async () => {
        const target = await listening(false);
        const item = { body: { a: 'x' } };

        await capture(target, false, item);

        expect(await listeners.current(target.workflowId)).toBeUndefined();
        expect(await listeners.schema(target.workflowId)).toEqual(learn(undefined, item));
        const second = capture(target, false, { body: { b: 1 } });
        await expect(second).rejects.toBeInstanceOf(AppError);
        await expect(second).rejects.toEqual(notListening);
        // The refused capture's transaction rolled back: one event, schema unchanged.
        expect(await eventCount(target.workflowId)).toBe(1);
        expect(await listeners.schema(target.workflowId)).toEqual(learn(undefined, item));
      });

      it('a keepListening listener stays open and the schema merges across captures (one row, upserted)', async () => {
        const target = await listening(true);
        const first = { body: { a: 'x' }, query: {} };
        const second = { body: { b: 1 }, query: { page: '2' } };

        await capture(target, true, first);
        await capture(target, true, second);

        expect(await listeners.current(target.workflowId)).toMatchObject({
          listenerId: target.listenerId,
          keepListening: true,
        });
        expect(await eventCount(target.workflowId)).toBe(2);
        const schema = await listeners.schema(target.workflowId);
        expect(schema).toEqual(learn(learn(undefined, first), second));
        expect(schema?.samples).toBe(2);
        expect(schema?.fields.map((f) => f.path)).toEqual(
          expect.arrayContaining(['body.a', 'body.b', 'query.page']),
        );
        const rows = await store.db
          .selectFrom('learned_schemas')
          .selectAll()
          .where('workflow_id', '=', target.workflowId)
          .execute();
        expect(rows).toHaveLength(1);
      });

      it.each([false, true])(
        'a capture after the listener expired is refused (keepListening %s)',
        async (keep) => {
          const target = await listening(keep);
          await expect(capture(target, keep, { body: {} }, iso(61_000))).rejects.toEqual(notListening);
          expect(await eventCount(target.workflowId)).toBe(0);
          expect(await listeners.schema(target.workflowId)).toBeUndefined();
        },
      );
    });

    describe('oauth2 tokens', () => {
      const write = (access: string) => ({
        state: 'connected' as const,
        tokens: access,
        expires_at: iso(3_600_000),
        refreshed_at: iso(),
        last_error: null,
      });

      it('one claim at a time per credential, until released or lapsed', async () => {
        await oauth2Repo.ensure(store.db, 'cred-1');
        await oauth2Repo.ensure(store.db, 'cred-1');
        const until = iso(60_000);
        const claims = await Promise.all(
          ['a', 'b', 'c', 'd'].map((owner) => oauth2Repo.claim(store.db, 'cred-1', owner, iso(), until)),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
        const holder = ['a', 'b', 'c', 'd'][claims.indexOf(true)]!;
        const other = holder === 'a' ? 'b' : 'a';
        expect(await oauth2Repo.claim(store.db, 'cred-1', other, iso(), until)).toBe(false);
        // A lapsed claim can be taken over.
        expect(await oauth2Repo.claim(store.db, 'cred-1', other, iso(120_000), iso(180_000))).toBe(true);
        await oauth2Repo.release(store.db, 'cred-1', other);
        expect(await oauth2Repo.claim(store.db, 'cred-1', holder, iso(), until)).toBe(true);
      });

      it('writes compare-and-set on the version, and release the claim', async () => {
        await oauth2Repo.ensure(store.db, 'cred-2');
        expect(await oauth2Repo.claim(store.db, 'cred-2', 'me', iso(), iso(60_000))).toBe(true);
        const [first, second] = await Promise.all([
          oauth2Repo.write(store.db, 'cred-2', 0, write('sealed-A')),
          oauth2Repo.write(store.db, 'cred-2', 0, write('sealed-B')),
        ]);
        expect([first, second].filter(Boolean)).toHaveLength(1);
        const row = await oauth2Repo.get(store.db, 'cred-2');
        expect(row).toMatchObject({ version: 1, state: 'connected', claimed_by: null, claim_until: null });
        expect(await oauth2Repo.write(store.db, 'cred-2', 0, write('sealed-C'))).toBe(false);
        // A connect replaces whatever is there and moves the version on.
        await oauth2Repo.connect(store.db, 'cred-2', write('sealed-D'));
        expect(await oauth2Repo.get(store.db, 'cred-2')).toMatchObject({ version: 2, tokens: 'sealed-D' });
        await oauth2Repo.delete(store.db, 'cred-2');
        expect(await oauth2Repo.get(store.db, 'cred-2')).toBeUndefined();
      });

      it('an authorization is taken once, and not after it expired', async () => {
        const row = (hash: string, expires: string) => ({
          state_hash: hash,
          credential_id: 'cred-3',
          verifier: 'sealed',
          actor_type: 'user' as const,
          actor_id: 'u1',
          actor_name: 'ann@example.com',
          created_at: iso(),
          expires_at: expires,
        });
        await oauth2Repo.insertAuthorization(store.db, row('h1', iso(600_000)));
        await oauth2Repo.insertAuthorization(store.db, row('h2', iso(-1)));
        const taken = await Promise.all([
          oauth2Repo.takeAuthorization(store.db, 'h1', iso()),
          oauth2Repo.takeAuthorization(store.db, 'h1', iso()),
        ]);
        expect(taken.filter(Boolean)).toHaveLength(1);
        expect(taken.find(Boolean)).toMatchObject({ credential_id: 'cred-3', actor_name: 'ann@example.com' });
        expect(await oauth2Repo.takeAuthorization(store.db, 'h2', iso())).toBeUndefined();
      });
    });

    describe('schedules', () => {
      const tick = (at: string, execution = newId()) => ({
        workflow_id: 'wf-s',
        scheduled_at: at,
        execution_id: execution,
        fired_at: at,
      });

      it('claims a tick once: the second insert of (workflow, scheduledAt) inserts nothing', async () => {
        expect(await schedulesRepo.claimTick(store.db, tick('2027-01-01T00:00:01.000Z'))).toBe(true);
        expect(await schedulesRepo.claimTick(store.db, tick('2027-01-01T00:00:01.000Z'))).toBe(false);
        expect(await schedulesRepo.claimTick(store.db, tick('2027-01-01T00:00:02.000Z'))).toBe(true);
        expect(await schedulesRepo.lastTick(store.db, 'wf-s')).toBe('2027-01-01T00:00:02.000Z');
        expect(await schedulesRepo.lastTick(store.db, 'other')).toBeUndefined();
      });

      it('concurrent claims of one tick in transactions: exactly one wins', async () => {
        const results = await Promise.all(
          Array.from({ length: 8 }, () =>
            store.transaction(async (trx) => {
              await schedulesRepo.getToClaim(trx, 'wf-s', store.caps.shared);
              return schedulesRepo.claimTick(trx, tick('2027-01-01T00:00:03.000Z'));
            }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('prunes claims older than a time, keeps the rest', async () => {
        for (const s of ['01', '02', '03'])
          await schedulesRepo.claimTick(store.db, tick(`2027-01-01T00:00:${s}.000Z`));
        await schedulesRepo.pruneTicks(store.db, 'wf-s', '2027-01-01T00:00:03.000Z');
        const rows = await store.db.selectFrom('schedule_ticks').select('scheduled_at').execute();
        expect(rows.map((r) => r.scheduled_at)).toEqual(['2027-01-01T00:00:03.000Z']);
      });

      it('puts, replaces, reads and deletes a live schedule', async () => {
        const row = {
          workflow_id: 'wf-s',
          version: 1,
          cron: '* * * * *',
          timezone: 'UTC',
          missed: 'runOnce' as const,
          since: '2027-01-01T00:00:00.000Z',
        };
        await schedulesRepo.put(store.db, row);
        await schedulesRepo.put(store.db, { ...row, version: 2, cron: '@hourly' });
        expect(await schedulesRepo.list(store.db)).toEqual([{ ...row, version: 2, cron: '@hourly' }]);
        expect(await schedulesRepo.getMany(store.db, ['wf-s', 'x'])).toHaveLength(1);
        expect(await schedulesRepo.getToClaim(store.db, 'wf-s', false)).toMatchObject({ version: 2 });
        await schedulesRepo.delete(store.db, 'wf-s');
        expect(await schedulesRepo.get(store.db, 'wf-s')).toBeUndefined();
      });
    });
  });
}
