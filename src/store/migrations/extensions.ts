/**
 * Migrations from 0016: the executor under load, reaching other systems, composition and the
 * webhook-native capabilities (SPEC 7d–7g). Numbered per workstream, so not in order here
 * (unordered migrations are allowed: store/open.ts).
 */
import { type Kysely, sql } from 'kysely';
import type { MigrationFactory } from './factory.js';

export const extensionMigrations: Record<string, MigrationFactory> = {
  '0016_concurrency_keys': () => ({
    async up(db: Kysely<unknown>) {
      // Concurrency keys (SPEC 7d, settings.concurrency; store/queue.ts claimKeyed). Evaluated when
      // the execution is accepted and kept on its row, so the claim rule is SQL over rows alone:
      // the key, the workflow's limit then, and the newest-wins value as a number (null: none).
      // `skip_reason` says why a `skipped` execution ran no step (`superseded`).
      await db.schema.alterTable('executions').addColumn('concurrency_key', 'text').execute();
      await db.schema.alterTable('executions').addColumn('concurrency_limit', 'integer').execute();
      await db.schema.alterTable('executions').addColumn('newest_value', 'double precision').execute();
      await db.schema.alterTable('executions').addColumn('skip_reason', 'text').execute();
      // What the claim rule reads (store/queue.ts keyedCandidates): the keyed rows of the
      // unfinished statuses, every column it needs in the index. Partial, so rows without a key
      // (most) cost it nothing on insert. Status first and covering: SQLite (no ANALYZE statistics)
      // took the (status, run_after) index instead of a partial index it had to look rows up
      // from, walking every queued row, keyed or not, at each claim.
      await db.schema
        .createIndex('executions_concurrency')
        .on('executions')
        .columns([
          'status',
          'workflow_id',
          'concurrency_key',
          'id',
          'run_after',
          'concurrency_limit',
          'newest_value',
        ])
        .where(sql.ref('concurrency_key'), 'is not', null)
        .execute();
      // Newest wins: the highest value of each key that has started. Kept apart from the
      // executions so that retention deleting old executions never lets an older event run again.
      await db.schema
        .createTable('concurrency_marks')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('concurrency_key', 'text', (c) => c.notNull())
        .addColumn('newest', 'double precision', (c) => c.notNull())
        .addPrimaryKeyConstraint('concurrency_marks_pk', ['workflow_id', 'concurrency_key'])
        .execute();
    },
  }),
  '0017_oauth2': () => ({
    async up(db: Kysely<unknown>) {
      // OAuth2 credentials (SPEC 7e, credentials/oauth2.ts): each one's tokens, sealed, with the
      // version its writes compare-and-set and the claim that lets one process at a time refresh.
      await db.schema
        .createTable('oauth2_tokens')
        .addColumn('credential_id', 'text', (c) => c.primaryKey())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('tokens', 'text')
        .addColumn('expires_at', 'text')
        .addColumn('refreshed_at', 'text')
        .addColumn('last_error', 'text')
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('claimed_by', 'text')
        .addColumn('claim_until', 'text')
        .execute();
      // Authorizations in progress: the sha256 of `state`, single use, ten minutes.
      await db.schema
        .createTable('oauth2_authorizations')
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('credential_id', 'text', (c) => c.notNull())
        .addColumn('verifier', 'text', (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
    },
  }),
  '0026_trigger_health': () => ({
    async up(db: Kysely<unknown>) {
      // Refused production calls counted per workflow, minute and code (src/health): the rate the
      // rejection alert compares, and the refusals of the health panel. The rejections table keeps
      // only a trigger's newest rows; these counts keep every refusal, one row per minute and code.
      await db.schema
        .createTable('refusal_counts')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('refusal_counts_pk', ['workflow_id', 'minute', 'code'])
        .execute();
      await db.schema.createIndex('refusal_counts_minute').on('refusal_counts').column('minute').execute();
      // Trigger alerts (SPEC 7g), one row per episode: its key makes "once per episode" one insert
      // that only the first of several processes wins. `last_seen` extends an episode that goes on.
      await db.schema
        .createTable('trigger_alerts')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('episode', 'text', (c) => c.notNull())
        .addColumn('since', 'text', (c) => c.notNull())
        .addColumn('fired_at', 'text', (c) => c.notNull())
        .addColumn('last_seen', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('execution_id', 'text')
        .addPrimaryKeyConstraint('trigger_alerts_pk', ['workflow_id', 'kind', 'episode'])
        .execute();
    },
  }),
  '0027_workflow_tests': () => ({
    async up(db: Kysely<unknown>) {
      // Tests from captured traffic (SPEC 7g, src/workflow-tests): a trigger item, the recorded
      // outputs of its effectful steps (the mocks) and what the run is expected to give, per workflow.
      await db.schema
        .createTable('workflow_tests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('source_execution_id', 'text')
        .addColumn('item', 'text', (c) => c.notNull())
        .addColumn('mocks', 'text', (c) => c.notNull())
        .addColumn('expected', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('workflow_tests_workflow_id')
        .on('workflow_tests')
        .columns(['workflow_id', 'id'])
        .execute();
    },
  }),
  '0028_waits': () => ({
    async up(db: Kysely<unknown>) {
      // Waits for a call or an event (SPEC 7g, executions/waits.ts): one row per execution, step
      // and forEach iteration; a call or a matching request resumes it with one conditional update.
      await db.schema
        .createTable('execution_waits')
        .addColumn('execution_id', 'text', (c) => c.notNull())
        .addColumn('step', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text')
        .addColumn('match', 'text')
        .addColumn('match_key', 'text')
        .addColumn('item', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('resumed_at', 'text')
        .addColumn('look_from', 'text')
        .addPrimaryKeyConstraint('execution_waits_pk', ['execution_id', 'step'])
        .execute();
      // A request of a watched workflow finds the waits on its key by this index.
      await db.schema
        .createIndex('execution_waits_key')
        .on('execution_waits')
        .columns(['workflow_id', 'match_key', 'status'])
        .execute();
    },
  }),
  '0021_data_store': () => ({
    async up(db: Kysely<unknown>) {
      // The data store (SPEC 7f; store/data-store.ts): JSON values by key, in the global scope
      // (`workflow_id` '') or a workflow's. `num` holds the value when it is a JSON number, so
      // `increment` adds in one statement on both dialects; `token` is set by every write, so
      // `setIfAbsent` tells from its own RETURNING whether it was the one that wrote.
      await db.schema
        .createTable('data_store')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('num', 'double precision')
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('data_store_pk', ['scope', 'workflow_id', 'key'])
        .execute();
      // The sweep deletes expired entries by this index.
      await db.schema.createIndex('data_store_expires_at').on('data_store').column('expires_at').execute();
    },
  }),
  '0022_sub_workflows': () => ({
    async up(db: Kysely<unknown>) {
      // Sub-workflows (SPEC 7f; executions/sub-workflows.ts): a child execution names its parent
      // and the parent's step (with its forEach indices) that started it, unique together, so a
      // step run again (at-least-once) finds its child instead of starting a second one; `depth`
      // counts the parents above (at most 10).
      await db.schema.alterTable('executions').addColumn('parent_execution_id', 'text').execute();
      await db.schema.alterTable('executions').addColumn('parent_step', 'text').execute();
      await db.schema
        .alterTable('executions')
        .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('executions_parent')
        .on('executions')
        .columns(['parent_execution_id', 'parent_step'])
        .unique()
        .execute();
    },
  }),
  '0029_executions_parent_partial': () => ({
    async up(db: Kysely<unknown>) {
      // 0022's index held an entry for every execution, nearly all without a parent, and each
      // insert paid for it. Partial: only children are in it, still one per parent step. In the
      // bench's webhook and workflow cases, once the routed case's backlog had grown the table to
      // ~400 000 rows, CPU per request fell by ~3 % and ~6 % (docs/performance.md, bench:ab).
      await db.schema.dropIndex('executions_parent').execute();
      await db.schema
        .createIndex('executions_parent')
        .on('executions')
        .columns(['parent_execution_id', 'parent_step'])
        .unique()
        .where(sql.ref('parent_execution_id'), 'is not', null)
        .execute();
    },
  }),
  '0020_schedules': () => ({
    async up(db: Kysely<unknown>) {
      // The live schedules (SPEC 7f, src/schedules): one row per active workflow whose published
      // trigger is a schedule, written with the publish/activate/deactivate that changes it, so every
      // scheduler reads the same thing. `since`: when this cron (in this zone) went live; a tick
      // before it was never due, so it is never "missed".
      await db.schema
        .createTable('schedules')
        .addColumn('workflow_id', 'text', (c) => c.primaryKey())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('cron', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('missed', 'text', (c) => c.notNull())
        .addColumn('since', 'text', (c) => c.notNull())
        .execute();
      // One row per tick that started an execution: inserted if absent in the transaction that
      // queues the execution, so however many processes schedule, a tick starts one execution.
      // Rows older than an hour are pruned as new ticks are claimed (only the latest is read).
      await db.schema
        .createTable('schedule_ticks')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('scheduled_at', 'text', (c) => c.notNull())
        .addColumn('execution_id', 'text', (c) => c.notNull())
        .addColumn('fired_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('schedule_ticks_pk', ['workflow_id', 'scheduled_at'])
        .execute();
    },
  }),
  '0018_variables': () => ({
    async up(db: Kysely<unknown>) {
      // Variables (SPEC 7e): `$vars.NAME` in expressions; a secret one (`secret` 1) is `$secrets.NAME`
      // and its `value` is sealed (SecretBox), never stored in clear.
      await db.schema
        .createTable('variables')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('secret', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  }),
};
