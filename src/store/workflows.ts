import type { JoinBuilder } from 'kysely';
import type { Step, TriggerConfig, Workflow, WorkflowSettings } from '../model/workflow.js';
import type { Db } from './store.js';
import type { Database, WorkflowRow } from './schema.js';

export function rowToWorkflow(row: WorkflowRow): Workflow {
  return {
    id: row.id,
    name: row.name,
    active: row.active === 1,
    version: row.version,
    publishedVersion: row.published_version,
    trigger: JSON.parse(row.trigger) as TriggerConfig,
    steps: JSON.parse(row.steps) as Step[],
    settings: JSON.parse(row.settings) as WorkflowSettings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function workflowToRow(w: Workflow): WorkflowRow {
  return {
    id: w.id,
    name: w.name,
    active: w.active ? 1 : 0,
    version: w.version,
    published_version: w.publishedVersion,
    trigger: JSON.stringify(w.trigger),
    steps: JSON.stringify(w.steps),
    settings: JSON.stringify(w.settings ?? {}),
    created_at: w.createdAt,
    updated_at: w.updatedAt,
  };
}

export const workflowsRepo = {
  async insert(db: Db, w: Workflow, savedBy?: string): Promise<void> {
    await db.insertInto('workflows').values(workflowToRow(w)).execute();
    await insertVersion(db, w, savedBy);
  },

  /** Saves the row; a new version number also gets its own history row. */
  async update(db: Db, w: Workflow, newVersion: boolean, savedBy?: string): Promise<void> {
    const { id, created_at: _c, ...rest } = workflowToRow(w);
    await db.updateTable('workflows').set(rest).where('id', '=', id).execute();
    if (newVersion) await insertVersion(db, w, savedBy);
  },

  /** The workflow as it was saved at `version`. */
  async getVersion(db: Db, id: string, version: number): Promise<Workflow | undefined> {
    const row = await db
      .selectFrom('workflow_versions')
      .select('definition')
      .where('workflow_id', '=', id)
      .where('version', '=', version)
      .executeTakeFirst();
    return row ? parseDefinition(row.definition) : undefined;
  },

  /**
   * The saved versions of a workflow, newest first (SPEC 7c): number, name and time, without the
   * definitions. `before`: the last version of the previous page.
   */
  async listVersions(
    db: Db,
    id: string,
    opts: { limit: number; before?: number | undefined },
  ): Promise<{ version: number; name: string; createdAt: string; savedBy: string | null }[]> {
    let q = db
      .selectFrom('workflow_versions')
      .select(['version', 'definition', 'created_at', 'saved_by'])
      .where('workflow_id', '=', id)
      .orderBy('version', 'desc')
      .limit(opts.limit);
    if (opts.before !== undefined) q = q.where('version', '<', opts.before);
    const rows = await q.execute();
    return rows.map((r) => ({
      version: r.version,
      name: (JSON.parse(r.definition) as { name: string }).name,
      createdAt: r.created_at,
      savedBy: r.saved_by ?? null,
    }));
  },

  async get(db: Db, id: string): Promise<Workflow | undefined> {
    const row = await db.selectFrom('workflows').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? rowToWorkflow(row) : undefined;
  },

  /** Every workflow, oldest first (`hookflow workflows export`). */
  async listAll(db: Db): Promise<Workflow[]> {
    const rows = await db.selectFrom('workflows').selectAll().orderBy('id').execute();
    return rows.map(rowToWorkflow);
  },

  /** Every workflow's draft trigger (JSON text): `hookflow secrets rotate`. */
  async listTriggers(db: Db): Promise<{ id: string; trigger: string }[]> {
    return db.selectFrom('workflows').select(['id', 'trigger']).execute();
  },

  /** Rewrites the draft's trigger (JSON text) and nothing else: not a save (no new version). */
  async setTrigger(db: Db, id: string, trigger: string): Promise<void> {
    await db.updateTable('workflows').set({ trigger }).where('id', '=', id).execute();
  },

  /** Every saved version's definition (JSON text): `hookflow secrets rotate`. */
  async listDefinitions(db: Db): Promise<{ workflow_id: string; version: number; definition: string }[]> {
    return db.selectFrom('workflow_versions').select(['workflow_id', 'version', 'definition']).execute();
  },

  /** Rewrites a saved version's definition (JSON text) in place. */
  async setDefinition(db: Db, workflowId: string, version: number, definition: string): Promise<void> {
    await db
      .updateTable('workflow_versions')
      .set({ definition })
      .where('workflow_id', '=', workflowId)
      .where('version', '=', version)
      .execute();
  },

  async exists(db: Db, id: string): Promise<boolean> {
    const row = await db.selectFrom('workflows').select('id').where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  },

  /** Newest first; `before` is the id of the last item of the previous page. */
  async list(db: Db, opts: { limit: number; before?: string | undefined }): Promise<WorkflowRow[]> {
    let q = db.selectFrom('workflows').selectAll().orderBy('id', 'desc').limit(opts.limit);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.execute();
  },

  async listActive(db: Db): Promise<Workflow[]> {
    const rows = await db.selectFrom('workflows').selectAll().where('active', '=', 1).execute();
    return rows.map(rowToWorkflow);
  },

  /** What production runs: the published version of every active workflow (one query). */
  async listPublished(db: Db): Promise<Workflow[]> {
    const rows = await activeWithPublished(db).execute();
    return rows.map((r) => publishedOf(rowToWorkflow(r), r.definition));
  },

  /** The published version of one workflow, as production runs it; undefined when inactive. */
  async getPublished(db: Db, id: string): Promise<Workflow | undefined> {
    const row = await activeWithPublished(db).where('workflows.id', '=', id).executeTakeFirst();
    return row ? publishedOf(rowToWorkflow(row), row.definition) : undefined;
  },

  /**
   * The settings (JSON text) of workflow `workflowId`, or, without one, of every workflow whose
   * settings name some searchable field (a LIKE on the text; the caller parses them).
   */
  async settingsOf(db: Db, workflowId: string | undefined): Promise<{ id: string; settings: string }[]> {
    const q = db.selectFrom('workflows').select(['id', 'settings']);
    return (
      workflowId ? q.where('id', '=', workflowId) : q.where('settings', 'like', '%"searchFields"%')
    ).execute();
  },

  /**
   * The drafts whose steps' JSON contains `text` (a LIKE: `text` must hold no `%` or `_`, as a
   * UUID holds none). The caller confirms each match by walking the steps.
   */
  async draftsMentioning(db: Db, text: string): Promise<{ id: string; name: string; steps: string }[]> {
    return db
      .selectFrom('workflows')
      .select(['id', 'name', 'steps'])
      .where('steps', 'like', `%${text}%`)
      .execute();
  },

  /**
   * The published versions older than their workflow's draft whose definition contains `text` (a
   * LIKE, as in `draftsMentioning`); a published version that is the draft is found there.
   */
  async olderPublishedMentioning(
    db: Db,
    text: string,
  ): Promise<{ id: string; name: string; definition: string }[]> {
    return db
      .selectFrom('workflows')
      .innerJoin('workflow_versions', onPublishedVersion)
      .select(['workflows.id', 'workflows.name', 'workflow_versions.definition'])
      .whereRef('workflows.published_version', '<>', 'workflows.version')
      .where('workflow_versions.definition', 'like', `%${text}%`)
      .execute();
  },

  /**
   * Deletes the workflow, its versions and what is kept for its trigger: test listeners, the
   * learned schema, refused calls, its executions' searchable fields and newest-wins marks. Its executions
   * stay (searched without the index). Give a transaction: it is several statements.
   */
  async delete(db: Db, id: string): Promise<boolean> {
    const res = await db.deleteFrom('workflows').where('id', '=', id).executeTakeFirst();
    await db.deleteFrom('workflow_versions').where('workflow_id', '=', id).execute();
    const deleted = Number(res.numDeletedRows) > 0;
    if (deleted) {
      await db.deleteFrom('test_listeners').where('workflow_id', '=', id).execute();
      await db.deleteFrom('learned_schemas').where('workflow_id', '=', id).execute();
      await db.deleteFrom('rejections').where('workflow_id', '=', id).execute();
      await db.deleteFrom('refusal_counts').where('workflow_id', '=', id).execute();
      await db.deleteFrom('trigger_alerts').where('workflow_id', '=', id).execute();
      await db.deleteFrom('workflow_tests').where('workflow_id', '=', id).execute();
      await db.deleteFrom('execution_fields').where('workflow_id', '=', id).execute();
      await db.deleteFrom('concurrency_marks').where('workflow_id', '=', id).execute();
      await db.deleteFrom('schedules').where('workflow_id', '=', id).execute();
      await db.deleteFrom('schedule_ticks').where('workflow_id', '=', id).execute();
      // Its own data store entries (the global scope is no workflow's).
      await db
        .deleteFrom('data_store')
        .where('scope', '=', 'workflow')
        .where('workflow_id', '=', id)
        .execute();
    }
    return deleted;
  },
};

/** Active workflows' rows, each with the definition of its published version (null when none). */
function activeWithPublished(db: Db) {
  return db
    .selectFrom('workflows')
    .leftJoin('workflow_versions', onPublishedVersion)
    .selectAll('workflows')
    .select('workflow_versions.definition')
    .where('workflows.active', '=', 1);
}

/** Joins a workflow's row to its published version's row. */
function onPublishedVersion(join: JoinBuilder<Database, 'workflows' | 'workflow_versions'>) {
  return join
    .onRef('workflow_versions.workflow_id', '=', 'workflows.id')
    .onRef('workflow_versions.version', '=', 'workflows.published_version');
}

/**
 * The workflow as production runs it: the published version's name, trigger and steps, under the
 * workflow's id and state, with `version` = the published one (so an execution records it). When
 * nothing newer was saved, the workflows row itself is that version (and the one start-up repairs
 * write to, services.ts repairSealedSecrets), so it is used as it is.
 */
function publishedOf(current: Workflow, definition: string | null): Workflow {
  const published = current.publishedVersion;
  if (published === null || published === current.version || definition === null) return current;
  const saved = parseDefinition(definition);
  return {
    ...current,
    name: saved.name,
    trigger: saved.trigger,
    steps: saved.steps,
    settings: saved.settings,
    version: published,
    updatedAt: saved.updatedAt,
  };
}

/** A saved version (`workflow_versions.definition`); those saved before settings existed get `{}`. */
export function parseDefinition(definition: string): Workflow {
  const saved = JSON.parse(definition) as Workflow;
  saved.settings ??= {};
  return saved;
}

async function insertVersion(db: Db, w: Workflow, savedBy?: string): Promise<void> {
  await db
    .insertInto('workflow_versions')
    .values({
      workflow_id: w.id,
      version: w.version,
      definition: JSON.stringify(w),
      created_at: w.updatedAt,
      ...(savedBy ? { saved_by: savedBy.slice(0, 320) } : {}),
    })
    .execute();
}
