/**
 * `options.idempotency` (SPEC 5b, FIELD-NOTES 4): providers retry deliveries; a repeat of the same
 * key within the window starts nothing and answers like the first call. The key comes from a
 * header (`{"header": "Idempotency-Key"}`) or an expression over the trigger item
 * (`{"key": "{{ headers.\"x-github-delivery\" }}"}`).
 */
import { compileTemplate, renderTemplate, type Template } from '../../engine/expressions.js';
import { idempotencyKeysRepo } from '../../store/idempotency-keys.js';
import type { Db } from '../../store/store.js';
import type { TriggerOptions } from '../../model/workflow.js';

export const DEFAULT_WINDOW_SECONDS = 86_400;
const MAX_KEY_LENGTH = 512;

type Idempotency = NonNullable<TriggerOptions['idempotency']>;

// Compiled once per options object (a new object on every save).
const templates = new WeakMap<Idempotency, Template>();

/** The request's key, or undefined when it has none (then it is handled like any request). */
export async function idempotencyKey(
  options: Idempotency,
  item: { headers: Record<string, string | string[]> },
  executionId: string,
): Promise<string | undefined> {
  let key: unknown;
  if (options.header) {
    const value = item.headers[options.header.toLowerCase()];
    key = Array.isArray(value) ? value[0] : value;
  } else if (options.key) {
    let template = templates.get(options);
    if (!template) {
      template = compileTemplate(options.key, '/trigger/options/idempotency/key').template;
      templates.set(options, template);
    }
    key = await renderTemplate(template, {
      input: item,
      trigger: item,
      steps: {},
      execution: { id: executionId, mode: 'production', workflowId: '', attempt: 1 },
    });
  }
  if (key === undefined || key === null || key === '') return undefined;
  const text = typeof key === 'string' ? key : JSON.stringify(key);
  return text.length > MAX_KEY_LENGTH ? text.slice(0, MAX_KEY_LENGTH) : text;
}

/** The execution an earlier delivery with this key started, while its window lasts. */
export async function earlierDelivery(
  db: Db,
  workflowId: string,
  key: string,
  now: string,
): Promise<string | undefined> {
  return idempotencyKeysRepo.find(db, workflowId, key, now);
}

/**
 * Inside the call's transaction: takes the key for `executionId` until `expiresAt`, or throws
 * DuplicateDelivery when a delivery with it committed first (an expired key is replaced).
 */
export async function takeKey(
  trx: Db,
  row: { workflowId: string; key: string; executionId: string; now: string; expiresAt: string },
): Promise<void> {
  const earlier = await earlierDelivery(trx, row.workflowId, row.key, row.now);
  if (earlier) throw new DuplicateDelivery(earlier);
  await idempotencyKeysRepo.replace(trx, {
    workflow_id: row.workflowId,
    key: row.key,
    execution_id: row.executionId,
    expires_at: row.expiresAt,
  });
}

/** A repeat of a delivery whose execution is `executionId`: answered like the first one. */
export class DuplicateDelivery extends Error {
  constructor(readonly executionId: string) {
    super('duplicate delivery');
  }
}
