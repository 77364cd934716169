/**
 * Workflow lifecycle: create, save (PUT/PATCH, version + 1), delete, publish/activate, deactivate.
 * Draft and published (SPEC 1): every save is a new version, the draft; production runs only
 * `publishedVersion`, which publish and activate set to the latest version. So saving an active
 * workflow (or listening for a test event, which saves first in the UI) never reaches live traffic.
 * Path ownership is checked in the store under one named lock (workflows/paths.ts), so two
 * processes cannot claim the same method+path at once. Every change is published on the bus; the
 * webhook registries (webhooks/triggers.ts) reload from it.
 */
import type { Logger } from 'pino';
import { Value } from 'typebox/value';
import { concurrencyErrors } from '../engine/concurrency.js';
import { validateStepsAsync } from '../engine/validate.js';
import { AppError, type FieldError } from '../errors.js';
import { newId, nowIso, type Page, toPage } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import type { SecretBox } from '../security/secrets.js';
import type { Db, Store } from '../store/store.js';
import { rowToWorkflow, workflowsRepo } from '../store/workflows.js';
import { schedulesRepo } from '../store/schedules.js';
import type { ScheduleRow } from '../store/schema.js';
import {
  type ConcurrencySettings,
  isWebhookTrigger,
  SECRET_FIELDS,
  type Step,
  type TriggerConfig,
  type TriggerInput,
  TriggerInputSchema,
  type WebhookTrigger,
  type Workflow,
  type WorkflowCreate,
  type WorkflowPatch,
  type WorkflowSettings,
  WorkflowSettingsSchema,
} from '../model/workflow.js';
import { checkReferences } from './references.js';
import { assertNoListenerConflict, assertPathFree, isListening } from './paths.js';
import { buildTrigger, maskTrigger } from './trigger.js';
import { type Audit, record, SYSTEM } from '../audit/audit.js';
import type { AuditAction } from '../shared/audit-actions.js';

export const PATHS_LOCK = 'hookflow:paths';

export class WorkflowService {
  readonly #store: Store;
  readonly #bus: Bus;
  readonly #secrets: SecretBox;
  /** When a schedule goes live (`since`): the schedulers' clock (schedules/clock.ts). */
  readonly #now: () => number;

  constructor({
    store,
    bus,
    secrets,
    now = Date.now,
  }: { store: Store; bus: Bus; secrets: SecretBox; now?: () => number }) {
    this.#store = store;
    this.#bus = bus;
    this.#secrets = secrets;
    this.#now = now;
  }

  /** `savedBy`: who saves (the API token's name or the account), kept with the version. */
  async create(
    input: WorkflowCreate,
    id: string = newId(),
    savedBy?: string,
    audit?: Audit,
    action: AuditAction = 'workflow.create',
  ): Promise<Workflow> {
    const trigger = unwrap(buildTrigger(input.trigger, undefined, this.#secrets));
    const now = nowIso();
    const workflow: Workflow = {
      id,
      name: input.name,
      active: false,
      version: 1,
      publishedVersion: null,
      trigger,
      steps: await checkSteps(input.steps ?? []),
      settings: settingsOf(input.settings, {}),
      createdAt: now,
      updatedAt: now,
    };
    await assertReferences(this.#store.db, workflow);
    await this.#store.transaction(async (trx) => {
      await workflowsRepo.insert(trx, workflow, savedBy);
      await record(trx, audit, { action, target: targetOf(workflow), details: { version: 1 } });
    });
    await this.#changed(workflow.id);
    return workflow;
  }

  /** Import: replace the workflow with this id when it exists, else create it (keeping a well-formed id). */
  async import(input: WorkflowCreate, id?: string, audit: Audit = SYSTEM): Promise<Workflow> {
    if (id && (await workflowsRepo.get(this.#store.db, id))) {
      return this.#save(id, undefined, importing(input), audit, 'workflow.import');
    }
    const fresh = id && /^[0-9a-f-]{36}$/.test(id) ? id : newId();
    return this.create(input, fresh, undefined, audit, 'workflow.import');
  }

  /**
   * Import of an entry that is to be live (`"active": true`, CLI `workflows import`). With
   * `published` (what an export holds when the draft was ahead of the published version) that
   * content is published and the draft saved on top of it, so a round trip deploys nothing new;
   * without it, the entry's content is published. Version numbers are those of this store.
   */
  async importLive(input: WorkflowCreate, id?: string, published?: WorkflowCreate): Promise<Workflow> {
    if (!published) return this.publish((await this.import(input, id)).id);
    const live = await this.publish((await this.import(published, id)).id);
    return this.replace(live.id, input);
  }

  async get(id: string): Promise<Workflow> {
    const workflow = await workflowsRepo.get(this.#store.db, id);
    if (!workflow) throw workflowNotFound(id);
    return workflow;
  }

  /** The workflow as it was saved at `version` (the history row); 404 for an unknown id or version. */
  async getVersion(id: string, version: number): Promise<Workflow> {
    const saved = await workflowsRepo.getVersion(this.#store.db, id, version);
    if (saved) return saved;
    await this.get(id);
    throw new AppError('not_found', `Workflow ${id} has no version ${version}.`, {
      hint: 'GET /api/v1/workflows/:id shows the latest version (the draft) and the published one.',
    });
  }

  /** The live schedules of these workflows, by id (what `trigger.nextRunAt` is computed from). */
  async liveSchedules(ids: readonly string[]): Promise<Map<string, ScheduleRow>> {
    const rows = await schedulesRepo.getMany(this.#store.db, ids);
    return new Map(rows.map((r) => [r.workflow_id, r]));
  }

  async list(limit: number, before: string | undefined): Promise<Page<Workflow>> {
    const rows = await workflowsRepo.list(this.#store.db, { limit: limit + 1, before });
    return toPage(rows, limit, rowToWorkflow);
  }

  /**
   * PUT: replace name, trigger, steps and settings. Settings left out are kept (clients written
   * before settings existed send none); `"settings": {}` clears them.
   */
  replace(id: string, input: WorkflowCreate, savedBy?: string, audit?: Audit): Promise<Workflow> {
    return this.#save(id, savedBy, importing(input), audit, 'workflow.save');
  }

  /**
   * Restore (SPEC 7c): save the content of an earlier version (name, trigger, steps, settings) as
   * a new version, the draft. Publishing it stays a separate step. Its secrets are the sealed
   * values that version held (sealOnce keeps them as they are), and it is checked like any save:
   * a credential or error workflow deleted since is refused (400 naming the field).
   */
  async restore(id: string, version: number, savedBy?: string, audit?: Audit): Promise<Workflow> {
    const saved = await this.getVersion(id, version);
    return this.#save(
      id,
      savedBy,
      (current) => ({
        name: saved.name,
        trigger: saved.trigger as TriggerInput,
        steps: saved.steps,
        settings: saved.settings ?? {},
        previous: current,
      }),
      audit,
      'workflow.restore',
      { restoredVersion: version },
    );
  }

  /** The saved versions, newest first (number, name, time). */
  async listVersions(
    id: string,
    limit: number,
    before: number | undefined,
  ): Promise<{
    items: { version: number; name: string; createdAt: string; savedBy: string | null }[];
    nextCursor: string | null;
  }> {
    await this.get(id);
    const rows = await workflowsRepo.listVersions(this.#store.db, id, { limit: limit + 1, before });
    const more = rows.length > limit;
    const items = more ? rows.slice(0, limit) : rows;
    const last = items[items.length - 1];
    return { items, nextCursor: more && last ? encodeVersionCursor(last.version) : null };
  }

  /**
   * PATCH: a JSON merge patch of name, trigger and steps (RFC 7386: null removes a key). The patch
   * applies to the stored trigger as a client would send it back, secrets as "***": buildTrigger
   * then keeps them as stored. Handing it the sealed values as input sealed them once more on
   * every PATCH, and the webhook refused the real password from then on.
   */
  patch(id: string, patch: WorkflowPatch, savedBy?: string, audit?: Audit): Promise<Workflow> {
    return this.#save(
      id,
      savedBy,
      (current) => ({
        name: patch.name ?? current.name,
        trigger:
          patch.trigger === undefined
            ? storedAsInput(current.trigger)
            : checkTrigger(mergePatch(storedAsInput(current.trigger), patch.trigger)),
        steps: patch.steps ?? current.steps,
        settings:
          patch.settings === undefined
            ? (current.settings ?? {})
            : settingsOf(mergePatch(current.settings ?? {}, patch.settings) as WorkflowSettings, {}),
        previous: current,
      }),
      audit,
      'workflow.save',
    );
  }

  async delete(id: string, audit?: Audit): Promise<void> {
    // With its versions, test listeners, learned schema, refused calls and search index.
    const deleted = await this.#store.transaction(
      async (trx) => {
        const current = await workflowsRepo.get(trx, id);
        if (!current || !(await workflowsRepo.delete(trx, id))) return false;
        await record(trx, audit, { action: 'workflow.delete', target: targetOf(current) });
        return true;
      },
      { lock: PATHS_LOCK },
    );
    if (!deleted) throw workflowNotFound(id);
    await this.#changed(id);
  }

  /**
   * Make the latest version the one production runs, and the workflow active (SPEC 8 `publish`).
   * 409 when the latest trigger's method+path is served by another active workflow.
   */
  publish(id: string, audit?: Audit): Promise<Workflow> {
    return this.#setLive(id, true, audit, 'workflow.publish');
  }

  /** SPEC 1: activate, like publish, makes the latest version live. */
  activate(id: string, audit?: Audit): Promise<Workflow> {
    return this.#setLive(id, true, audit, 'workflow.activate');
  }

  /** Production stops serving; publishedVersion is kept (what ran last). */
  deactivate(id: string, audit?: Audit): Promise<Workflow> {
    return this.#setLive(id, false, audit, 'workflow.deactivate');
  }

  async #setLive(
    id: string,
    live: boolean,
    audit?: Audit,
    action: AuditAction = 'workflow.publish',
  ): Promise<Workflow> {
    let changed = false;
    const workflow = await this.#store.transaction(
      async (trx) => {
        const current = await workflowsRepo.get(trx, id);
        if (!current) throw workflowNotFound(id);
        const next: Workflow = live
          ? { ...current, active: true, publishedVersion: current.version }
          : { ...current, active: false };
        if (next.active === current.active && next.publishedVersion === current.publishedVersion)
          return current;
        next.updatedAt = nowIso();
        if (live) await assertPathFree(trx, next);
        await workflowsRepo.update(trx, next, false);
        await setLiveSchedule(trx, next, new Date(this.#now()).toISOString());
        await record(trx, audit, {
          action,
          target: targetOf(next),
          details: { publishedVersion: next.publishedVersion },
        });
        changed = true;
        return next;
      },
      { lock: PATHS_LOCK },
    );
    if (changed) await this.#changed(id);
    return workflow;
  }

  async #save(
    id: string,
    savedBy: string | undefined,
    build: (current: Workflow) => {
      name: string;
      trigger: TriggerInput | undefined;
      steps: Step[];
      settings: WorkflowSettings;
      previous: Workflow;
    },
    audit?: Audit,
    action: AuditAction = 'workflow.save',
    details: Record<string, unknown> = {},
  ): Promise<Workflow> {
    const workflow = await this.#store.transaction(
      async (trx) => {
        const current = await workflowsRepo.get(trx, id);
        if (!current) throw workflowNotFound(id);
        const input = build(current);
        const next: Workflow = {
          ...current,
          name: input.name,
          trigger: unwrap(buildTrigger(input.trigger, current.trigger, this.#secrets)),
          steps: await checkSteps(input.steps),
          settings: input.settings,
          version: current.version + 1,
          updatedAt: nowIso(),
        };
        await assertReferences(trx, next);
        // Saving changes only the draft; production keeps its published trigger. A draft path that
        // another active workflow owns is still refused while this one is active, so that a later
        // publish cannot fail on it (the editor shows it on Save).
        if (next.active) await assertPathFree(trx, next);
        // The test URL serves the draft while a listener is open: its new method+path must be free
        // of other listeners, or the test registry could not take it.
        const now = nowIso();
        if (await isListening(trx, id, now)) await assertNoListenerConflict(trx, next, now);
        await workflowsRepo.update(trx, next, true, savedBy);
        await record(trx, audit, {
          action,
          target: targetOf(next),
          details: { version: next.version, ...details },
        });
        return next;
      },
      { lock: PATHS_LOCK },
    );
    await this.#changed(id);
    return workflow;
  }

  /**
   * Start-up repair of webhook secrets sealed more than once (an older PATCH sealed the stored
   * value again). Not a migration: it needs the encryption key, and migrations run from
   * openStore(), which the CLI's utility commands and the store tests call without one. It runs
   * on every start, after the migrations, and is idempotent: a value sealed once is left as it is,
   * so only rows that still need it are written (also those an older process broke during a
   * rolling upgrade). Each row is re-read and written under the paths lock, so a save by another
   * process is never overwritten with a stale copy. Version history rows keep their value: a
   * published version older than the row is revealed through `revealAuth`, which peels extra
   * layers itself (workflows/trigger.ts). Cost: one AES-GCM open per secret
   * per workflow, a few microseconds each.
   */
  async repairSealedSecrets(log: Logger): Promise<number> {
    const PAGE = 500;
    let repaired = 0;
    let before: string | undefined;
    for (;;) {
      const rows = await workflowsRepo.list(this.#store.db, { limit: PAGE, before });
      for (const row of rows) {
        if (!this.#sealedTwice(rowToWorkflow(row).trigger)) continue;
        const fixed = await this.#store.transaction(
          async (trx) => {
            const current = await workflowsRepo.get(trx, row.id);
            if (!current || !isWebhookTrigger(current.trigger) || !this.#sealedTwice(current.trigger))
              return false;
            const auth: Record<string, unknown> = { ...current.trigger.auth };
            for (const field of SECRET_FIELDS) {
              if (typeof auth[field] === 'string')
                auth[field] = this.#secrets.innermost(auth[field] as string);
            }
            const trigger = { ...current.trigger, auth: auth as WebhookTrigger['auth'] };
            await workflowsRepo.update(trx, { ...current, trigger }, false);
            return true;
          },
          { lock: PATHS_LOCK },
        );
        if (!fixed) continue;
        repaired++;
        log.warn({ workflowId: row.id }, 'repaired a webhook secret that was sealed more than once');
        await this.#changed(row.id);
      }
      if (rows.length < PAGE) return repaired;
      before = rows[rows.length - 1]!.id;
    }
  }

  #sealedTwice(trigger: TriggerConfig): boolean {
    if (!isWebhookTrigger(trigger)) return false;
    const fields = trigger.auth as Record<string, unknown>;
    return SECRET_FIELDS.some(
      (f) => typeof fields[f] === 'string' && this.#secrets.innermost(fields[f] as string) !== fields[f],
    );
  }

  #changed(workflowId: string): Promise<void> {
    return this.#bus.publish('workflow.changed', { workflowId });
  }
}

/**
 * The schedulers (src/schedules) read the live schedules from the store: the published schedule
 * trigger of an active workflow, written in the transaction that makes it live. A re-publish that
 * keeps the cron and zone keeps `since`, so ticks missed before it are still caught up.
 */
async function setLiveSchedule(db: Db, workflow: Workflow, now: string): Promise<void> {
  const trigger = workflow.trigger;
  if (!workflow.active || trigger.type !== 'schedule' || workflow.publishedVersion === null) {
    await schedulesRepo.delete(db, workflow.id);
    return;
  }
  const current = await schedulesRepo.get(db, workflow.id);
  const same = current && current.cron === trigger.cron && current.timezone === trigger.timezone;
  await schedulesRepo.put(db, {
    workflow_id: workflow.id,
    version: workflow.publishedVersion,
    cron: trigger.cron,
    timezone: trigger.timezone,
    missed: trigger.missed,
    since: same ? current.since : now,
  });
}

/** The stored trigger as the API shows it: what a client would send back unchanged. */
function storedAsInput(trigger: TriggerConfig): TriggerInput {
  if (!isWebhookTrigger(trigger)) return { ...trigger };
  return maskTrigger(trigger) as TriggerInput;
}

/** A merged trigger was not validated by the route schema (the patch was partial): check it here. */
function checkTrigger(trigger: unknown): TriggerInput {
  if (Value.Check(TriggerInputSchema, trigger)) return trigger;
  const fields = Value.Errors(TriggerInputSchema, trigger)
    .slice(0, 20)
    .map((e) => ({ field: `/trigger${e.instancePath}`, message: e.message }));
  throw validationFailed(fields);
}

/** Unknown step types, duplicate names, bad fields and expressions that do not compile: 400 naming each. */
async function checkSteps(steps: Step[]): Promise<Step[]> {
  // Async: a code step's syntax is checked by the code sandbox, loaded on first need.
  const errors = await validateStepsAsync(steps);
  if (errors.length > 0) throw validationFailed(errors.slice(0, 50));
  return steps;
}

/**
 * Settings as stored: `errorWorkflowId: null` (or absent) sets none. `fallback` when the input has
 * no settings at all; `keep` (PUT) means absent settings keep `fallback` rather than clearing it.
 */
function settingsOf(
  input:
    | {
        concurrency?: { key: string; limit?: number; newestWins?: string | null } | null;
        errorWorkflowId?: string | null;
        searchFields?: string[] | null;
      }
    | undefined,
  fallback: WorkflowSettings,
  keep = false,
): WorkflowSettings {
  if (input === undefined) return keep ? fallback : {};
  // The routes check their body against this schema; imports (CLI) and merged patches come here unchecked.
  if (!Value.Check(WorkflowSettingsSchema, input)) {
    const fields = Value.Errors(WorkflowSettingsSchema, input)
      .slice(0, 20)
      .map((e) => ({ field: `/settings${e.instancePath}`, message: e.message }));
    throw validationFailed(fields);
  }
  const c = input.concurrency;
  const concurrency: ConcurrencySettings | undefined = c
    ? {
        key: c.key,
        ...(c.limit !== undefined ? { limit: c.limit } : {}),
        ...(typeof c.newestWins === 'string' ? { newestWins: c.newestWins } : {}),
      }
    : undefined;
  if (concurrency) {
    const errors = concurrencyErrors(concurrency);
    if (errors.length > 0) throw validationFailed(errors);
  }
  return {
    ...(concurrency ? { concurrency } : {}),
    ...(typeof input.errorWorkflowId === 'string' ? { errorWorkflowId: input.errorWorkflowId } : {}),
    // `[]` declares none, stored as absent: a workflow without searchable fields keeps `{}`.
    ...(input.searchFields?.length ? { searchFields: [...input.searchFields] } : {}),
  };
}

/** Credentials and the error workflow named must exist: 400 naming each field that names one that does not. */
async function assertReferences(db: Db, workflow: Workflow): Promise<void> {
  const errors = await checkReferences(db, workflow);
  if (errors.length > 0) throw validationFailed(errors.slice(0, 50));
}

/** Version list cursors: base64url of `v<number>` (the last version of the page). */
const encodeVersionCursor = (version: number): string => Buffer.from(`v${version}`).toString('base64url');

export function decodeVersionCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const m = /^v(\d{1,10})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (m) return Number(m[1]);
  throw new AppError('validation_failed', 'The cursor is not one this API handed out.', {
    hint: 'Pass the nextCursor value of the previous page unchanged, or omit cursor to start from the top.',
    fields: [{ field: '/cursor', message: 'unknown cursor' }],
  });
}

function unwrap<T>(result: { trigger: T } | { errors: FieldError[] }): T {
  if ('errors' in result) throw validationFailed(result.errors);
  return result.trigger;
}

export function validationFailed(fields: FieldError[]): AppError {
  return new AppError(
    'validation_failed',
    `The request is not valid: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}.`,
    { fields, hint: 'Fix the fields named above and send the request again.' },
  );
}

export const workflowNotFound = (id: string) =>
  new AppError('not_found', `There is no workflow with id ${id}.`, {
    hint: 'List workflows with GET /api/v1/workflows to see their ids.',
  });

/** RFC 7386 JSON merge patch. Keys like __proto__ are skipped: the patch is user input. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const targetOf = (w: Workflow) => ({ type: 'workflow', id: w.id, name: w.name });

/** PUT and import: the content given, settings left out kept. */
const importing =
  (input: WorkflowCreate) =>
  (
    current: Workflow,
  ): {
    name: string;
    trigger: TriggerInput | undefined;
    steps: Step[];
    settings: WorkflowSettings;
    previous: Workflow;
  } => ({
    name: input.name,
    trigger: input.trigger,
    steps: input.steps ?? [],
    settings: settingsOf(input.settings, current.settings ?? {}, true),
    previous: current,
  });
