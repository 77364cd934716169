/**
 * Migrations 0001–0015: receiving, storing and running executions, accounts, credentials, versions,
 * rejections, setup codes and teams (index.ts gathers them).
 */
import { type Kysely, sql } from 'kysely';
import type { MigrationFactory } from './factory.js';

export const foundationMigrations: Record<string, MigrationFactory> = {
  '0001_initial': (caps) => ({
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('workflows')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('steps', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      // Every saved version, so an execution runs (and is retried with) the version it was accepted for.
      await db.schema
        .createTable('workflow_versions')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('workflow_versions_pk', ['workflow_id', 'version'])
        .execute();

      await db.schema
        .createTable('api_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();

      await db.schema
        .createTable('executions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('workflow_version', 'integer', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('steps', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('retry_of', 'text')
        .addColumn('run_after', 'text', (c) => c.notNull())
        .addColumn('locked_until', 'text')
        .addColumn('locked_by', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      // The queue's claim scans queued rows by due time; lists filter by workflow and page by id.
      await db.schema
        .createIndex('executions_status_run_after')
        .on('executions')
        .columns(['status', 'run_after'])
        .execute();
      await db.schema
        .createIndex('executions_workflow_id')
        .on('executions')
        .columns(['workflow_id', 'id'])
        .execute();

      await db.schema
        .createTable('test_listeners')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workflow_id', 'text', (c) => c.notNull().unique())
        .addColumn('keep_listening', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('test_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('execution_id', 'text')
        .addColumn('item', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('test_events_workflow_id')
        .on('test_events')
        .columns(['workflow_id', 'id'])
        .execute();

      await db.schema
        .createTable('learned_schemas')
        .addColumn('workflow_id', 'text', (c) => c.primaryKey())
        .addColumn('schema', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('blobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('execution_id', 'text')
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('data', sql.raw(caps.binaryType), (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  }),
  '0002_accounts': () => ({
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sessions')
        // sha256 of the cookie value: a leaked database holds no usable session.
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
    },
  }),
  '0003_trigger_options': () => ({
    async up(db: Kysely<unknown>) {
      // Idempotency keys of accepted requests (SPEC 5b): written in the request's own transaction.
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('execution_id', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['workflow_id', 'key'])
        .execute();
      // schemaCheck: "warn" notes what differed from the learned schema on the execution.
      await db.schema.alterTable('executions').addColumn('warnings', 'text').execute();
    },
  }),
  '0004_blob_parts': (caps) => ({
    async up(db: Kysely<unknown>) {
      // Files over 1 MiB are stored in parts (store/blobs.ts): SQLite copies a bound value twice
      // while inserting it, so a 16 MiB file in one value cost 32 MiB more while it was stored.
      await db.schema
        .createTable('blob_parts')
        .addColumn('blob_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', sql.raw(caps.binaryType), (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_parts_pk', ['blob_id', 'seq'])
        .execute();
      // Retention deletes an execution's files with it (queue/retention.ts): without an index
      // every batch of deleted executions would scan the whole blobs table.
      await db.schema.createIndex('blobs_execution_id').on('blobs').column('execution_id').execute();
    },
  }),
  '0005_rate_limits': () => ({
    async up(db: Kysely<unknown>) {
      // options.rateLimit windows shared by all processes of a distributed deployment
      // (webhooks/options/rate-limit.ts); one row per trigger and mode.
      await db.schema
        .createTable('rate_limits')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .execute();
    },
  }),
  '0006_published_version': () => ({
    async up(db: Kysely<unknown>) {
      // Draft and published (SPEC 1): production runs `published_version`, saves make new drafts.
      // Until now every save of an active workflow went live, so what production runs today is
      // its current version; an inactive workflow was never published (null).
      await db.schema.alterTable('workflows').addColumn('published_version', 'integer').execute();
      await sql`update workflows set published_version = version where active = 1`.execute(db);
    },
  }),
  '0007_waiting': () => ({
    async up(db: Kysely<unknown>) {
      // Waiting executions (SPEC 7b `wait`, 7c retry pauses): status `waiting`, due at `run_after`
      // (the claim's (status, run_after) index serves them too), resumed from this checkpoint: the
      // engine's RunResult.resume as JSON. Null for every other execution.
      await db.schema.alterTable('executions').addColumn('resume_state', 'text').execute();
    },
  }),
  '0008_credentials': () => ({
    async up(db: Kysely<unknown>) {
      // Credentials of outbound calls (SPEC 7c, src/credentials): `data` is the JSON of the
      // type's fields, sealed whole with the installation's key (SecretBox), never in clear.
      await db.schema
        .createTable('credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // Workflow settings (SPEC 1, 7c: errorWorkflowId), JSON; versioned with the rest of the
      // workflow in workflow_versions.definition.
      await db.schema
        .alterTable('workflows')
        .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      // The error execution a failed production execution started (SPEC 7c): the link shown on
      // the failed one, and the guard that starts it at most once.
      await db.schema.alterTable('executions').addColumn('error_execution_id', 'text').execute();
    },
  }),
  '0009_rejections': () => ({
    async up(db: Kysely<unknown>) {
      // Refused webhook calls per trigger (FIELD-NOTES 15), kept in the store with a retention
      // (webhooks/options/rejections.ts): when, code, method, caller address; never a body or a
      // credential. Listed newest first per workflow; ids are time-ordered.
      await db.schema
        .createTable('rejections')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('rejections_workflow_id')
        .on('rejections')
        .columns(['workflow_id', 'id'])
        .execute();
      await db.schema.createIndex('rejections_at').on('rejections').column('at').execute();
    },
  }),
  '0010_version_saved_by': () => ({
    async up(db: Kysely<unknown>) {
      // Who saved each version (the API token's name or the signed-in account), for the history
      // (GET /workflows/:id/versions `savedBy`); null for versions saved before, or by the CLI.
      await db.schema.alterTable('workflow_versions').addColumn('saved_by', 'text').execute();
    },
  }),
  '0011_execution_fields': (caps) => ({
    async up(db: Kysely<unknown>) {
      // Searchable fields of executions (settings.searchFields; store/execution-search.ts):
      // the declared fields' values, written with the execution. The primary key is the search's
      // index: one workflow's path and value, newest execution first. On SQLite the table is that
      // b-tree alone (WITHOUT ROWID), not a rowid table plus an index holding the same columns.
      await db.schema
        .createTable('execution_fields')
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('execution_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('execution_fields_pk', ['workflow_id', 'path', 'value', 'execution_id'])
        .$call((t) => (caps.name === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      // Retention deletes the rows of a range of executions (queue/retention.ts).
      await db.schema
        .createIndex('execution_fields_execution_id')
        .on('execution_fields')
        .column('execution_id')
        .execute();
    },
  }),
  '0012_setup_codes': () => ({
    async up(db: Kysely<unknown>) {
      // First-start setup codes (SPEC 11, accounts/setup-codes.ts): the sha256 of each code that
      // may create the owner account, so a code printed by one process works on another.
      await db.schema
        .createTable('setup_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
    },
  }),
  '0013_checkpoint_parts': () => ({
    async up(db: Kysely<unknown>) {
      // A waiting execution's checkpoint in parts (engine/checkpoint.ts): one row per park, each
      // what that park added, so a wait inside a loop writes each value once rather than all of
      // them at every park. `resume_state` keeps the head. Deleted with the execution's finish.
      await db.schema
        .createTable('execution_checkpoints')
        .addColumn('execution_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('records', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('execution_checkpoints_pk', ['execution_id', 'seq'])
        .execute();
    },
  }),
  '0014_members': () => ({
    async up(db: Kysely<unknown>) {
      // Team roles (SPEC 11b): `member` was never given to anyone; were it, it would edit.
      await sql`update users set role = 'editor' where role = 'member'`.execute(db);
      // An API token belongs to a member (null: the owner, as `hookflow tokens create` makes them)
      // and acts with its role, capped by the member's. Tokens made before roles stay the owner's.
      await db.schema.alterTable('api_tokens').addColumn('user_id', 'text').execute();
      await db.schema
        .alterTable('api_tokens')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('owner'))
        .execute();
      // Removing a member deletes their sessions and tokens in one go.
      await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();
      await db.schema.createIndex('api_tokens_user_id').on('api_tokens').column('user_id').execute();
      // Pending invitations: the sha256 of the link's token, deleted when it is accepted or revoked.
      await db.schema
        .createTable('invitations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('invited_by', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
    },
  }),
  '0015_audit_log': () => ({
    async up(db: Kysely<unknown>) {
      // The audit log (SPEC 11b, src/audit): each row written in the transaction of the change it
      // records. Listed newest first, filtered by actor, action or workflow; deleted by age.
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_name', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text')
        .addColumn('target_name', 'text')
        .addColumn('workflow_id', 'text')
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('ip', 'text')
        .execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
      await db.schema
        .createIndex('audit_log_workflow_id')
        .on('audit_log')
        .columns(['workflow_id', 'id'])
        .execute();
      await db.schema.createIndex('audit_log_actor_id').on('audit_log').columns(['actor_id', 'id']).execute();
      await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'id']).execute();
    },
  }),
};
