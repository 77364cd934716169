/**
 * Credentials (SPEC 7c): create, list, read, rotate (PATCH) and delete; `data` is validated per
 * type, sealed whole (AES-256-GCM, SecretBox) and never returned. `forRun` unseals the ones a
 * workflow version names, for the executor to hand to the engine for one run: clear values live
 * only in that run's memory, never in a workflow, a record or a log.
 *
 * In use: a credential named by a step (`http`, `email` …) of a workflow's current draft or of its published
 * version cannot be deleted (409 `credential_in_use`, naming them). Older versions do not hold it:
 * restoring one that names a deleted credential is refused on save like any unknown id.
 */
import { Value } from 'typebox/value';
import type { RunCredential } from '../engine/credentials.js';
import { AppError, type FieldError } from '../errors.js';
import { newId, nowIso, type Page, toPage } from '../ids.js';
import { MASK } from '../model/workflow.js';
import type { Bus } from '../bus/bus.js';
import type { SecretBox } from '../security/secrets.js';
import { credentialsRepo } from '../store/credentials.js';
import type { CredentialRow } from '../store/schema.js';
import type { Db, Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import { credentialRefs } from '../model/step-walk.js';
import { validationFailed } from '../workflows/service.js';
import {
  CREDENTIAL_DATA,
  type Credential,
  type CredentialCreate,
  type CredentialPatch,
  type CredentialType,
  type CredentialValue,
  type OAuth2Status,
  oauth2Rules,
} from './model.js';
import { type OAuth2TokensRow, oauth2Repo } from '../store/oauth2.js';
import { type Audit, record } from '../audit/audit.js';

export class CredentialService {
  readonly #store: Store;
  readonly #secrets: SecretBox;
  readonly #bus: Bus | undefined;

  /** `bus`: where executors hear that a credential changed (they close its database connections). */
  constructor({ store, secrets, bus }: { store: Store; secrets: SecretBox; bus?: Bus }) {
    this.#store = store;
    this.#secrets = secrets;
    this.#bus = bus;
  }

  async create(input: CredentialCreate, audit?: Audit): Promise<Credential> {
    const data = checkData(input.type, input.data);
    const now = nowIso();
    const row: CredentialRow = {
      id: newId(),
      name: input.name,
      type: input.type,
      data: this.#secrets.seal(JSON.stringify(data)),
      created_at: now,
      updated_at: now,
    };
    await this.#store.transaction(async (trx) => {
      await credentialsRepo.insert(trx, row);
      await record(trx, audit, {
        action: 'credential.create',
        target: { type: 'credential', id: row.id, name: row.name },
        details: { type: row.type },
      });
    });
    return toApi(row, data, row.type === 'oauth2' ? null : undefined);
  }

  async list(limit: number, before: string | undefined): Promise<Page<Credential>> {
    const rows = await credentialsRepo.list(this.#store.db, { limit: limit + 1, before });
    const tokens = await this.#tokenRows(rows);
    return toPage(rows, limit, (row) => toApi(row, this.#open(row), tokens.get(row.id) ?? oauth2None(row)));
  }

  async get(id: string): Promise<Credential> {
    const row = await this.#row(this.#store.db, id);
    const tokens = await this.#tokenRows([row]);
    return toApi(row, this.#open(row), tokens.get(row.id) ?? oauth2None(row));
  }

  /** The token rows of the oauth2 credentials among `rows` (SPEC 7e: their state is shown). */
  async #tokenRows(rows: readonly CredentialRow[]): Promise<Map<string, OAuth2TokensRow>> {
    const ids = rows.filter((r) => r.type === 'oauth2').map((r) => r.id);
    const found = await oauth2Repo.getMany(this.#store.db, ids);
    return new Map(found.map((r) => [r.credential_id, r]));
  }

  /**
   * Rotate: a new name and/or new values. The values sent replace those stored; a field left out
   * or sent as "***" (what GET shows) keeps its stored value. The result is validated whole.
   */
  async update(id: string, patch: CredentialPatch, audit?: Audit): Promise<Credential> {
    const updated = await this.#store.transaction(async (trx) => {
      const row = await this.#row(trx, id);
      let data = this.#open(row);
      if (patch.data) {
        const merged: Record<string, CredentialValue> = { ...data };
        for (const [key, value] of Object.entries(patch.data)) {
          if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
          if (value !== MASK) merged[key] = value;
        }
        data = checkData(row.type, merged);
      }
      const next: CredentialRow = {
        ...row,
        name: patch.name ?? row.name,
        data: patch.data ? this.#secrets.seal(JSON.stringify(data)) : row.data,
        updated_at: nowIso(),
      };
      await credentialsRepo.update(trx, next);
      // Which fields changed, never their values.
      const rotated = Object.entries(patch.data ?? {})
        .filter(([, value]) => value !== MASK)
        .map(([key]) => key);
      // Tokens got with other settings (another client, provider, scope) are not this
      // credential's any more: it connects again. A new client secret alone keeps them: the
      // next refresh uses it (rotating a secret must not cut off a connected account).
      if (row.type === 'oauth2' && rotated.some((k) => k !== 'clientSecret'))
        await oauth2Repo.delete(trx, id);
      else if (row.type === 'oauth2' && rotated.length > 0 && data.grantType === 'client_credentials')
        await oauth2Repo.delete(trx, id);
      await record(trx, audit, {
        action: 'credential.rotate',
        target: { type: 'credential', id, name: next.name },
        details: { ...(next.name !== row.name ? { renamedFrom: row.name } : {}), fields: rotated },
      });
      const tokens = await oauth2Repo.get(trx, id);
      return toApi(next, data, tokens ?? oauth2None(next));
    });
    if (patch.data) await this.#changed(id);
    return updated;
  }

  async delete(id: string, audit?: Audit): Promise<void> {
    await this.#store.transaction(async (trx) => {
      const row = await this.#row(trx, id);
      const users = await usersOf(trx, id);
      if (users.length > 0) {
        const shown = users
          .slice(0, 5)
          .map((u) => `"${u.name}" (${u.workflowId}, ${u.where} ${u.pointer})`)
          .join(', ');
        throw new AppError(
          'credential_in_use',
          `Credential "${row.name}" is used by ${users.length === 1 ? 'a step' : `${users.length} steps`} of workflow ${shown}${users.length > 5 ? ' and more' : ''}.`,
          {
            hint: 'Point those steps at another credential (or remove them), save and publish, then delete it.',
          },
        );
      }
      await credentialsRepo.delete(trx, id);
      await oauth2Repo.delete(trx, id);
      await record(trx, audit, {
        action: 'credential.delete',
        target: { type: 'credential', id, name: row.name },
      });
    });
    await this.#changed(id);
  }

  /**
   * Told after the commit: executors close what they hold open with the old values (an `sql`
   * step's pooled connections). In one process the bus awaits them; a failed notice is not the
   * caller's failure (a run with the new values opens a new pool anyway).
   */
  async #changed(id: string): Promise<void> {
    await this.#bus?.publish('credential.changed', { credentialId: id }).catch(() => undefined);
  }

  /** The ids among `ids` that name no credential (checked when a workflow is saved). */
  async missing(db: Db, ids: readonly string[]): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    const found = new Set((await credentialsRepo.getMany(db, unique)).map((r) => r.id));
    return new Set(unique.filter((id) => !found.has(id)));
  }

  /**
   * The clear data of the credentials these steps name, for one run (the executor passes it to
   * the engine; see engine/credentials.ts). A credential deleted since is left out: the step that
   * names it fails, saying so.
   */
  async forRun(steps: readonly unknown[]): Promise<Record<string, RunCredential> | undefined> {
    const refs = credentialRefs(steps);
    if (refs.length === 0) return undefined;
    const rows = await credentialsRepo.getMany(this.#store.db, [...new Set(refs.map((r) => r.id))]);
    const out: Record<string, RunCredential> = {};
    // An oauth2 credential's secrets stay here: steps get its access tokens one at a time (oauth2.ts).
    for (const row of rows)
      out[row.id] = { type: row.type, data: row.type === 'oauth2' ? {} : this.#open(row) };
    return out;
  }

  /**
   * The `smtp` credential `ref` names — its id, or else its name (one credential of that name) —
   * in clear, for the system's own mail (credentials/mailer.ts); or why there is none.
   */
  async smtp(
    ref: string,
  ): Promise<{ id: string; data: Record<string, CredentialValue> } | { error: string }> {
    const db = this.#store.db;
    const byId = await credentialsRepo.get(db, ref);
    const rows = byId ? [byId] : await credentialsRepo.byName(db, ref);
    if (rows.length === 0) return { error: `no credential has the id or name "${ref}"` };
    if (rows.length > 1) return { error: `more than one credential is named "${ref}": name one by its id` };
    const row = rows[0]!;
    if (row.type !== 'smtp')
      return { error: `credential "${ref}" is a ${row.type} credential, not an smtp one` };
    return { id: row.id, data: this.#open(row) };
  }

  async #row(db: Db, id: string): Promise<CredentialRow> {
    const row = await credentialsRepo.get(db, id);
    if (!row) throw credentialNotFound(id);
    return row;
  }

  #open(row: CredentialRow): Record<string, CredentialValue> {
    return JSON.parse(this.#secrets.reveal(row.data)) as Record<string, CredentialValue>;
  }
}

/** The type's fields, checked: 400 validation_failed naming each wrong `/data/<field>`. */
function checkData(
  type: CredentialType,
  input: Record<string, CredentialValue>,
): Record<string, CredentialValue> {
  const schema = CREDENTIAL_DATA[type];
  // "587" for a port is the number 587 (a form's field is text); nothing else is coerced.
  const data = Value.Convert(schema, { ...input }) as Record<string, CredentialValue>;
  if (Value.Check(schema, data)) {
    const rules = type === 'oauth2' ? oauth2Rules(data) : [];
    if (rules.length > 0) throw validationFailed(rules);
    return data;
  }
  const fields: FieldError[] = [];
  for (const e of Value.Errors(schema, data)) {
    const params = e.params as { additionalProperties?: string[]; requiredProperties?: string[] };
    if (e.keyword === 'required')
      for (const p of params.requiredProperties ?? [])
        fields.push({ field: `/data/${p}`, message: `is required for a ${type} credential` });
    else if (e.keyword === 'additionalProperties')
      for (const p of params.additionalProperties ?? [])
        fields.push({
          field: `/data/${p}`,
          message: `is not a field of a ${type} credential (it has ${Object.keys(schema.properties).join(', ')})`,
        });
    else fields.push({ field: `/data${e.instancePath}`, message: e.message });
  }
  // TypeBox may report one field under several keywords: each field is named once, by its first.
  const unique = [...new Map(fields.reverse().map((f) => [f.field, f])).values()].reverse();
  throw validationFailed(unique.slice(0, 20));
}

/**
 * The API's view: values masked; an oauth2 credential's token state (`tokens`: its row, null when
 * it has none yet), never a token.
 */
function toApi(
  row: CredentialRow,
  data: Record<string, CredentialValue>,
  tokens: OAuth2TokensRow | null | undefined,
): Credential {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    data: Object.fromEntries(Object.keys(data).map((k) => [k, MASK])) as Record<string, '***'>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(tokens === undefined ? {} : { oauth2: oauth2Status(tokens) }),
  };
}

function oauth2Status(row: OAuth2TokensRow | null): OAuth2Status {
  return {
    state: row?.state ?? 'not_connected',
    expiresAt: row?.expires_at ?? null,
    refreshedAt: row?.refreshed_at ?? null,
    lastError: row?.last_error ?? null,
  };
}

/** null for an oauth2 credential without a token row (not connected), undefined for other types. */
const oauth2None = (row: CredentialRow): null | undefined => (row.type === 'oauth2' ? null : undefined);

export const credentialNotFound = (id: string) =>
  new AppError('not_found', `There is no credential with id ${id}.`, {
    hint: 'List credentials with GET /api/v1/credentials to see their ids.',
  });

interface CredentialUser {
  workflowId: string;
  name: string;
  where: 'draft' | 'published version';
  pointer: string;
}

/**
 * The steps of current drafts and published versions that name credential `id`. A LIKE on the
 * stored JSON finds the candidate rows (an id is a UUID: no LIKE wildcard in it), the step walk
 * confirms them (the id could sit in some other string).
 */
async function usersOf(db: Db, id: string): Promise<CredentialUser[]> {
  const users: CredentialUser[] = [];
  const drafts = await workflowsRepo.draftsMentioning(db, id);
  for (const w of drafts)
    for (const ref of credentialRefs(JSON.parse(w.steps) as unknown[]))
      if (ref.id === id) users.push({ workflowId: w.id, name: w.name, where: 'draft', pointer: ref.pointer });
  const published = await workflowsRepo.olderPublishedMentioning(db, id);
  for (const w of published) {
    const steps = (JSON.parse(w.definition) as { steps?: unknown[] }).steps ?? [];
    for (const ref of credentialRefs(steps))
      if (ref.id === id)
        users.push({ workflowId: w.id, name: w.name, where: 'published version', pointer: ref.pointer });
  }
  return users;
}
