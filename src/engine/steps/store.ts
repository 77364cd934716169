/**
 * `store`: the data store (SPEC 7f), values kept between executions by key — in the workflow's
 * own scope (the default) or the global one shared by every workflow.
 *   get → {found, value}   set → {value}   delete → {deleted}
 *   increment → {value}    setIfAbsent → {set, value}
 * `increment` and `setIfAbsent` are atomic across processes (store/data-store.ts: one statement
 * each), which is what dedup by a business key (`setIfAbsent` on the order id, then a `filter` on
 * `set`), counters and cursors need. `ttlSeconds` makes the entry expire: `set` and `setIfAbsent`
 * give the entry they write that expiry; `increment` gives it to an entry it creates, and an entry
 * it adds to keeps its own (a counter per window). Test runs use the same store as production.
 *
 * The step reaches the store through the executor (StepContext.services): the engine runs on a
 * thread without a database.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import {
  DATA_KEY_MAX_CHARS,
  DATA_TTL_MAX_SECONDS,
  dataKeyProblem,
  dataValueJson,
} from '../../shared/data-store.js';
import { type DataStoreRequest, ServiceRefusal } from '../services.js';
import { defineStep, Expr, StepFailure } from './types.js';

const OPS = ['get', 'set', 'delete', 'increment', 'setIfAbsent'] as const;

export const storeStep = defineStep({
  type: 'store',
  description: 'Get, set, delete or atomically increment a value kept between executions (the data store).',
  config: Type.Object(
    {
      op: Type.Union(OPS.map((op) => Type.Literal(op))),
      // A number (an order id) is a key too: it is used as its text.
      key: Type.Union([Type.String({ minLength: 1, maxLength: 4 * DATA_KEY_MAX_CHARS }), Type.Number()]),
      value: Type.Optional(Type.Unknown()),
      by: Type.Optional(Expr(Type.Number())),
      ttlSeconds: Type.Optional(Expr(Type.Number({ exclusiveMinimum: 0, maximum: DATA_TTL_MAX_SECONDS }))),
      scope: Type.Optional(Type.Union([Type.Literal('workflow'), Type.Literal('global')])),
    },
    { additionalProperties: false },
  ),
  check(config) {
    const errors: FieldError[] = [];
    const has = (k: string) => Object.hasOwn(config, k);
    const writes = config.op === 'set' || config.op === 'setIfAbsent';
    if (writes && !has('value')) errors.push({ field: '/value', message: `is required for ${config.op}` });
    if (!writes && has('value'))
      errors.push({ field: '/value', message: `is only for set and setIfAbsent, not ${config.op}` });
    if (config.op !== 'increment' && has('by'))
      errors.push({ field: '/by', message: `is only for increment, not ${config.op}` });
    if ((config.op === 'get' || config.op === 'delete') && has('ttlSeconds'))
      errors.push({
        field: '/ttlSeconds',
        message: `is only for set, setIfAbsent and increment, not ${config.op}`,
      });
    if (typeof config.key === 'string' && !config.key.includes('{{')) {
      const problem = dataKeyProblem(config.key);
      if (problem) errors.push({ field: '/key', message: problem });
    }
    return errors;
  },
  async run(config, { services, scope }) {
    const key = typeof config.key === 'number' ? String(config.key) : config.key;
    const keyProblem = dataKeyProblem(key);
    if (keyProblem) throw new StepFailure(`The key ${keyProblem}.`, { field: '/key' });
    if (config.by !== undefined && !Number.isFinite(config.by))
      throw new StepFailure('`by` must be a finite number.', { field: '/by' });
    const request: DataStoreRequest = {
      op: config.op,
      scope: config.scope ?? 'workflow',
      workflowId: scope?.execution.workflowId ?? '',
      key,
    };
    if (config.op === 'set' || config.op === 'setIfAbsent') {
      // Checked here too, so a value past the limit is not copied to the executor first.
      const checked = dataValueJson(config.value);
      if ('problem' in checked) throw new StepFailure(`The value ${checked.problem}.`, { field: '/value' });
      request.value = config.value;
    }
    if (config.op === 'increment') request.by = config.by ?? 1;
    if (config.ttlSeconds !== undefined) request.ttlSeconds = config.ttlSeconds;
    if (!services)
      throw new StepFailure(
        'The data store cannot be reached from here (this engine runs without the executor).',
      );
    try {
      return { output: await services.dataStore(request) };
    } catch (err) {
      if (err instanceof ServiceRefusal)
        throw new StepFailure(err.message, {
          ...(err.field ? { field: err.field } : {}),
          ...(err.code ? { code: err.code } : {}),
        });
      throw err;
    }
  },
});
