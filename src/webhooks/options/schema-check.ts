/**
 * `options.schemaCheck` (SPEC 5b): a production item is compared with the schema learned from test
 * captures — `reject` refuses what differs (422 schema_mismatch), `warn` notes it on the execution.
 * The learned schema is cached per workflow and dropped when a new capture teaches it more.
 */
import type { Bus } from '../../bus/bus.js';
import { AppError } from '../../errors.js';
import type { WebhookWorkflow } from '../../model/workflow.js';
import type { TriggerItem } from '../item.js';
import { diffAgainstSchema } from '../schema/diff.js';
import type { JsonSchema, LearnedSchema } from '../schema/json-schema.js';
import type { TestListeners } from '../test-listener.js';

const MAX_CACHED = 10_000;

export class SchemaCheck {
  readonly #listeners: TestListeners;
  /** Learned schema per workflow (null: none yet); dropped on every capture. */
  readonly #schemas = new Map<string, LearnedSchema | null>();

  constructor(listeners: TestListeners, bus: Bus) {
    this.#listeners = listeners;
    bus.subscribe('test.captured', ({ workflowId }) => {
      this.#schemas.delete(workflowId);
    });
  }

  /** What differs from the learned schema ([] when off or nothing is learned); `reject` throws. */
  async check(workflow: WebhookWorkflow, item: TriggerItem): Promise<string[]> {
    const mode = workflow.trigger.options.schemaCheck ?? 'off';
    if (mode === 'off') return [];
    let learned = this.#schemas.get(workflow.id);
    if (learned === undefined) {
      learned = (await this.#listeners.schema(workflow.id)) ?? null;
      if (this.#schemas.size >= MAX_CACHED) this.#schemas.clear();
      this.#schemas.set(workflow.id, learned);
    }
    // Nothing learned yet: nothing to compare with.
    if (!learned) return [];
    const differences = diffPayload(learned.jsonSchema, item);
    if (differences.length > 0 && mode === 'reject') {
      throw new AppError(
        'schema_mismatch',
        `The payload differs from the learned schema: ${differences.slice(0, 10).join('; ')}.`,
        {
          hint: 'Send the fields the workflow expects, or capture a test event with the new shape so the schema learns it.',
        },
      );
    }
    return differences;
  }
}

/** Compare what a payload carries (body and query) with the learned schema of the same parts. */
function diffPayload(schema: JsonSchema, item: TriggerItem): string[] {
  const properties = schema.properties ?? {};
  const parts = ['body', 'query'].filter((p) => properties[p] !== undefined);
  const sub: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(parts.map((p) => [p, properties[p]!])),
    required: parts,
  };
  return diffAgainstSchema(sub, { body: item.body, query: item.query });
}
