/**
 * The editor's form state of one step (one draft model for every step type) and what a step
 * type's form module provides. One module per step type, mirroring src/engine/steps/.
 */
import type { FieldProblem } from '../../api';
import type { Step } from '../../types';
import type { EmailDraft } from './email';

export interface Row {
  key: string;
  name: string;
  value: string;
}

/** One `switch` case: `equals` (a JSON value, as text) or `when` (a condition), and its steps. */
export interface CaseDraft {
  key: string;
  kind: 'equals' | 'when';
  equals: string;
  when: string;
  steps: StepDraft[];
}

export interface StepDraft {
  key: string;
  name: string;
  type: string;
  /** set */
  fields: Row[];
  keepInput: boolean;
  /** filter and if */
  condition: string;
  /** http */
  method: string;
  url: string;
  query: Row[];
  timeoutMs: string;
  failOnError: boolean;
  /** http: the id of the credential applied at run time (SPEC 7c); '' for none. */
  credential: string;
  /** http retry (SPEC 7c): attempts ('' for one, no retry), backoff, and which failures retry. */
  retryAttempts: string;
  retryBackoffMs: string;
  retryOn: string[];
  /** The stored retry named `on` (so an explicit list of all three is kept as written). */
  retryOnSet: boolean;
  /** http and respond */
  headers: Row[];
  body: string;
  /** respond */
  status: string;
  /** if: `then` and `else` */
  thenSteps: StepDraft[];
  elseSteps: StepDraft[];
  /** switch */
  value: string;
  cases: CaseDraft[];
  defaultSteps: StepDraft[];
  /** forEach */
  items: string;
  loopSteps: StepDraft[];
  /** code */
  source: string;
  /** wait: by a number of seconds or until a time */
  waitBy: 'seconds' | 'until';
  seconds: string;
  until: string;
  /** fail */
  message: string;
  /** sql (lib/steps/sql.ts): the statement; its parameters ($1… or ?), one per row (the name unused). */
  sql: string;
  params: Row[];
  /** sql: `params` stored as one expression giving the array ('' when a list of rows). */
  paramsExpr: string;
  maxRows: string;
  /** email (SPEC 7e): its addresses, subject, bodies and attachments (credential, timeout, retry above). */
  email: EmailDraft;
  /** A type this UI has no form for: its configuration as JSON text. */
  raw: string;
  /** Configuration keys the form does not edit. */
  extra: Record<string, unknown>;
}

/** Turns a nested step list into the API's steps (names checked across the whole workflow). */
export type WriteList = (steps: StepDraft[], at: string) => Step[];

export interface StepForm {
  type: string;
  label: string;
  description: string;
  /** The configuration keys the form edits; the others are kept as they were (`extra`). */
  keys: string[];
  /**
   * The draft fields of its own a stored step of this type sets (what the common reading in
   * lib/draft.ts leaves out), so a type's form stays in its module.
   */
  read?(step: Step): Partial<StepDraft>;
  /** What a new step's form starts with, where that is not blank. */
  start?(): Partial<StepDraft>;
  /** The step lists it holds (`if`, `switch`, `forEach`), in the order they appear. */
  lists?(d: StepDraft): StepDraft[][];
  /** The form's fields into `step`; problems found before the server would see them. */
  write(d: StepDraft, step: Step, at: string, problems: FieldProblem[], writeList: WriteList): void;
}
