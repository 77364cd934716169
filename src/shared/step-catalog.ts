/**
 * Each step type's nested lists, purity, description and the fields that take $secrets, for the
 * model and the UI (which may not import the engine). Written by `npm run catalog` from src/engine/steps/: do not edit.
 */
import type { StepCatalogEntry } from './step-lists.js';

export const STEP_CATALOG: Readonly<Record<string, StepCatalogEntry>> = {
  set: {
    lists: [],
    pure: true,
    description: 'Set fields (renamed, computed or constant) on the item.',
    secretFields: [],
  },
  filter: {
    lists: [],
    pure: true,
    description: 'Stop the run (status `filtered`) unless the condition is true.',
    secretFields: [],
  },
  http: {
    lists: [],
    pure: false,
    description: 'Send an HTTP request; its response is the output.',
    secretFields: ['/url', '/headers', '/query', '/body'],
  },
  respond: {
    lists: [],
    pure: true,
    description: 'Set the status, headers and body of the webhook response (response mode `respondStep`).',
    secretFields: [],
  },
  if: {
    lists: ['then', 'else'],
    pure: true,
    description: 'Run the `then` steps when the condition is true, else the `else` steps.',
    secretFields: [],
  },
  switch: {
    lists: ['cases/*/steps', 'default'],
    pure: true,
    description: 'Run the steps of the first case whose value equals `value` or whose `when` is true.',
    secretFields: [],
  },
  forEach: {
    lists: ['steps'],
    pure: true,
    description: 'Run the steps once per element of `items`, with `$item` and `$index`.',
    secretFields: [],
  },
  code: {
    lists: [],
    pure: false,
    description: 'Run JavaScript on the item; what it returns is the output.',
    secretFields: [],
  },
  wait: {
    lists: [],
    pure: false,
    description:
      'Pause the execution for a time (at most 30 days), until its resume URL is called, or until another webhook workflow receives a matching event.',
    secretFields: [],
  },
  fail: {
    lists: [],
    pure: true,
    description: 'Fail the execution with a message.',
    secretFields: [],
  },
  email: {
    lists: [],
    pure: false,
    description:
      'Send an email through an SMTP server (an smtp credential); the recipients it took are the output.',
    secretFields: ['/to', '/cc', '/bcc', '/replyTo', '/subject', '/text', '/html'],
  },
  sql: {
    lists: [],
    pure: false,
    description:
      'Run one SQL statement on PostgreSQL or MySQL, data passed as parameters; its rows are the output.',
    secretFields: ['/params'],
  },
  store: {
    lists: [],
    pure: false,
    description: 'Get, set, delete or atomically increment a value kept between executions (the data store).',
    secretFields: [],
  },
  workflow: {
    lists: [],
    pure: false,
    description: 'Run another workflow (a sub-workflow) with an input, and wait for its result.',
    secretFields: [],
  },
};

/** The nested lists a step type declares (undefined: none, or a type this catalog does not know). */
export function catalogLists(type: unknown): readonly string[] | undefined {
  return typeof type === 'string' && Object.hasOwn(STEP_CATALOG, type)
    ? STEP_CATALOG[type]!.lists
    : undefined;
}

/** Whether a step type takes `$secrets` at `field` (a JSON pointer inside the step, `/headers/Authorization`). */
export function catalogAllowsSecrets(type: unknown, field: string): boolean {
  if (typeof type !== 'string' || !Object.hasOwn(STEP_CATALOG, type)) return false;
  return STEP_CATALOG[type]!.secretFields.some((f) => field === f || field.startsWith(`${f}/`));
}
