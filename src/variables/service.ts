/**
 * Variables (SPEC 7e): named values the workflows of this hookflow share. `$vars.NAME` reads one in
 * any step expression; a secret one is sealed at rest (SecretBox), shown as "***" by every answer
 * (write-only, as credentials' data), and usable only as `$secrets.NAME` in the fields a step type
 * allows (engine: StepType.secretFields), where the run scrubs its value from whatever it records.
 * Each change is audited in its own transaction (`variable.set`, `variable.delete`), never with
 * the value. `forRun` hands the executor the variables of one run, secrets unsealed.
 */
import Type, { type Static } from 'typebox';
import { AppError } from '../errors.js';
import { nowIso } from '../ids.js';
import type { RunVariables } from '../engine/types.js';
import { MASK } from '../model/workflow.js';
import { VARIABLE_NAME, VARIABLE_NAME_MAX_CHARS, VARIABLE_VALUE_MAX_CHARS } from '../shared/variables.js';
import type { SecretBox } from '../security/secrets.js';
import type { VariableRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { variablesRepo } from '../store/variables.js';
import { type Audit, record } from '../audit/audit.js';

export const VariableNameSchema = Type.String({
  pattern: VARIABLE_NAME,
  minLength: 1,
  maxLength: VARIABLE_NAME_MAX_CHARS,
});

export const VariablePutSchema = Type.Object(
  {
    value: Type.String({ maxLength: VARIABLE_VALUE_MAX_CHARS }),
    secret: Type.Optional(
      Type.Boolean({
        description: 'Sealed at rest, shown as "***", usable only as $secrets.NAME (default false).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type VariablePut = Static<typeof VariablePutSchema>;

export const VariableSchema = Type.Object({
  name: Type.String(),
  value: Type.String({ description: 'The value; "***" for a secret variable.' }),
  secret: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type Variable = Static<typeof VariableSchema>;

export class VariableService {
  readonly #store: Store;
  readonly #secrets: SecretBox;

  constructor({ store, secrets }: { store: Store; secrets: SecretBox }) {
    this.#store = store;
    this.#secrets = secrets;
  }

  async list(): Promise<Variable[]> {
    return (await variablesRepo.list(this.#store.db)).map(toApi);
  }

  async get(name: string): Promise<Variable> {
    const row = await variablesRepo.get(this.#store.db, name);
    if (!row) throw variableNotFound(name);
    return toApi(row);
  }

  /**
   * Sets a variable (created when it does not exist: `created`). A secret's value sent back as
   * "***" (what GET shows) keeps the stored one, so a form can change other things without
   * knowing it; a variable made secret or not secret again must be given its value.
   */
  async put(
    name: string,
    input: VariablePut,
    audit?: Audit,
  ): Promise<{ variable: Variable; created: boolean }> {
    const secret = input.secret ?? false;
    return this.#store.transaction(async (trx) => {
      const old = await variablesRepo.get(trx, name);
      const now = nowIso();
      let value: string;
      if (secret && input.value === MASK && old?.secret === 1) value = old.value;
      else if (input.value === MASK && old?.secret === 1 && !secret)
        throw new AppError(
          'validation_failed',
          `Variable ${name} is secret: its value cannot be shown, so it is not kept when it stops being secret.`,
          {
            hint: 'Send the value itself with "secret": false.',
            fields: [{ field: '/value', message: 'is "***": send the value itself' }],
          },
        );
      else value = secret ? this.#secrets.seal(input.value) : input.value;
      const row: VariableRow = {
        name,
        value,
        secret: secret ? 1 : 0,
        created_at: old?.created_at ?? now,
        updated_at: now,
      };
      await variablesRepo.put(trx, row);
      // Never the value, in clear or sealed.
      await record(trx, audit, {
        action: 'variable.set',
        target: { type: 'variable', id: name, name },
        details: { secret, created: old === undefined },
      });
      return { variable: toApi(row), created: old === undefined };
    });
  }

  async delete(name: string, audit?: Audit): Promise<void> {
    await this.#store.transaction(async (trx) => {
      const row = await variablesRepo.get(trx, name);
      if (!row) throw variableNotFound(name);
      await variablesRepo.delete(trx, name);
      await record(trx, audit, {
        action: 'variable.delete',
        target: { type: 'variable', id: name, name },
        details: { secret: row.secret === 1 },
      });
    });
  }

  /** Every variable for one run: `vars` the plain ones, `secrets` the secret ones unsealed. */
  async forRun(): Promise<RunVariables> {
    const out: RunVariables = { vars: {}, secrets: {} };
    for (const row of await variablesRepo.list(this.#store.db)) {
      if (row.secret === 1) out.secrets[row.name] = this.#secrets.reveal(row.value);
      else out.vars[row.name] = row.value;
    }
    return out;
  }
}

function toApi(row: VariableRow): Variable {
  return {
    name: row.name,
    value: row.secret === 1 ? MASK : row.value,
    secret: row.secret === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export const variableNotFound = (name: string) =>
  new AppError('not_found', `There is no variable named ${name}.`, {
    hint: 'List variables with GET /api/v1/variables; create one with PUT /api/v1/variables/<NAME>.',
  });
