/**
 * The editor's form state of one step, and what a step type's entry in the registry provides.
 * A draft is a discriminated union on `type`: every draft has the common base (its React key, its
 * name, the configuration keys its form does not edit), and a known type adds its own fields
 * (declared in its module, one per step type, mirroring src/engine/steps/). A type the editor has
 * no form for is a `RawDraft`: its configuration as JSON text.
 *
 * A draft keeps its nested step lists under the stored step's own field names (`then`, `else`,
 * `cases/N/steps`, `default`, `steps`), so the lists declared in src/shared/step-catalog.ts find
 * them in a draft as in a stored step (lib/lanes.ts).
 */
import type { FieldProblem } from '../../api';
import type { Step } from '../../types';
import type { CodeDraft } from './code';
import type { EmailDraft } from './email';
import type { FailDraft } from './fail';
import type { FilterDraft } from './filter';
import type { ForEachDraft, IfDraft, SwitchDraft } from './flow';
import type { HttpDraft } from './http';
import type { RespondDraft } from './respond';
import type { SetDraft } from './set';
import type { SqlDraft } from './sql';
import type { StoreDraft } from './store';
import type { WaitDraft } from './wait';
import type { WorkflowDraft } from './workflow';

export interface Row {
  key: string;
  name: string;
  value: string;
}

/** What every step's draft has. */
export interface DraftBase {
  /** React's key for the step (not saved). */
  key: string;
  name: string;
  /** Configuration keys the form does not edit, kept as they were. */
  extra: Record<string, unknown>;
}

/** A step type's draft: the base, its type, its own fields. */
export type DraftOf<T extends string, Own> = DraftBase & { type: T } & Own;

/** A step whose type this UI has no form for: its configuration as JSON text. */
export type RawDraft = DraftOf<string, { raw: string }>;

/** Each step type with a form, by type: the registry (lib/steps/index.ts) has one entry for each. */
export interface Drafts {
  set: SetDraft;
  filter: FilterDraft;
  http: HttpDraft;
  email: EmailDraft;
  respond: RespondDraft;
  if: IfDraft;
  switch: SwitchDraft;
  forEach: ForEachDraft;
  code: CodeDraft;
  wait: WaitDraft;
  fail: FailDraft;
  sql: SqlDraft;
  store: StoreDraft;
  workflow: WorkflowDraft;
}

export type FormType = keyof Drafts;

export type StepDraft = Drafts[FormType] | RawDraft;

/** A draft's own fields: what its type's `read` gives and its form edits. */
export type Own<D> = Omit<D, keyof DraftBase | 'type'>;

/** The keys of a draft that hold one text. */
export type TextKey<D> = { [K in keyof D]-?: D[K] extends string ? K : never }[keyof D] & string;

/** Turns a nested step list into the API's steps (names checked across the whole workflow). */
export type WriteList = (steps: StepDraft[], at: string) => Step[];

/** Turns a stored nested step list into drafts (anything that is not a step object is left out). */
export type ReadList = (value: unknown) => StepDraft[];

/** One step type in the registry: what the editor knows of it apart from its form component. */
export interface StepForm<D extends DraftBase & { type: string } = StepDraft> {
  type: D['type'];
  label: string;
  description: string;
  /** A glyph beside its label on the card (decoration only: the label says the type). */
  icon: string;
  /** The configuration keys the form edits; the others are kept as they were (`extra`). */
  keys: string[];
  /** The draft's own fields from a stored step of this type (blank where the step has none). */
  read(step: Step, readList: ReadList): Own<D>;
  /** What a new step's form starts with, where that is not what `read` gives an empty step. */
  start?(): Partial<Own<D>>;
  /** What the step does, in one line (its card's summary). */
  summary(d: D): string;
  /**
   * How a nested list (by its pointer suffix under the step, from step-catalog.ts) is named: its
   * title above the lane, and the lane in a sentence for `label`, the step's name.
   */
  lane?(d: D, suffix: string, label: string): { title: string; place: string };
  /** The form's fields into `step`; problems found before the server would see them. */
  write(d: D, step: Step, at: string, problems: FieldProblem[], writeList: WriteList): void;
}
