/** What the step forms share: their props, an expression field, a branch box. */
import type { ReactNode } from 'react';
import type { FieldProblem } from '../../../api';
import { ExpressionInput } from '../../../components/ExpressionInput';
import type { PickerField } from '../../../components/FieldPicker';
import type { Scope } from '../../../lib/expressions';
import type { SimResult } from '../../../lib/simulate';
import type { StepDraft, TextKey } from '../../../lib/steps/types';
import type { ResponseMode } from '../../../types';

/** What a step's expressions can refer to: the field picker's fields and the preview's scope. */
export interface StepContext {
  fields: PickerField[];
  scope: Scope | undefined;
  /** The workflow being edited (a `workflow` step may not run it). */
  workflowId: string;
}

export type RenderList = (
  steps: StepDraft[],
  at: string,
  title: string,
  onChange: (steps: StepDraft[]) => void,
) => ReactNode;

/** What every step type's form component takes; `D` is its type's draft. */
export interface Props<D = StepDraft> {
  step: D;
  /** JSON pointer of the step (`/steps/0`, `/steps/1/cases/0/steps/2`). */
  at: string;
  label: string;
  onChange: (patch: Partial<D>) => void;
  context: StepContext;
  problems: FieldProblem[];
  result: SimResult | undefined;
  renderList: RenderList;
  /** The trigger's response mode (a `respond` step says when its answer is not sent). */
  responseMode: ResponseMode;
}

/** The problems at a field (or under it), as one sentence; undefined when there are none. */
export function problemAt(problems: FieldProblem[], field: string): string | undefined {
  const found = problems.filter((p) => p.field === field || p.field.startsWith(`${field}/`));
  return found.length ? found.map((p) => p.message).join('; ') : undefined;
}

/** An expression field of the step, with the picker, the preview and its problems. */
export function Expr<D>({
  step,
  at,
  onChange,
  context,
  problems,
  k,
  title,
  placeholder,
  multiline,
  error,
  toValue,
  fields = context.fields,
  field = k,
}: Props<D> & {
  k: TextKey<D>;
  title: string;
  placeholder?: string;
  multiline?: boolean;
  /** A problem the form sees itself, shown when the server's are none. */
  error?: string;
  /** How the text is read as a value for the preview (a body: JSON or text). */
  toValue?: (text: string) => unknown;
  /** What the picker offers, where not the step's context. */
  fields?: PickerField[];
  /** The stored step's key, where the draft names it otherwise. */
  field?: string;
}) {
  return (
    <ExpressionInput
      label={title}
      value={step[k] as string}
      onChange={(v) => onChange({ [k]: v } as Partial<D>)}
      fields={fields}
      scope={context.scope}
      placeholder={placeholder}
      multiline={multiline}
      serverError={problemAt(problems, `${at}/${field}`) ?? error}
      field={`${at}/${field}`}
      toValue={toValue}
    />
  );
}

/** A nested list in a bordered box, with its own heading (focused when its last step is removed). */
export function Branch({
  id,
  title,
  taken,
  children,
  testId,
}: {
  id: string;
  title: string;
  taken: boolean | undefined;
  children: ReactNode;
  testId?: string;
}) {
  return (
    <section
      className={`branch${taken === false ? ' branch-idle' : ''}`}
      aria-labelledby={id}
      data-testid={testId}
    >
      <h4 id={id} tabIndex={-1} className="branch-title">
        {title}
        {taken === true && <span className="badge branch-badge">taken by the event on screen</span>}
      </h4>
      {children}
    </section>
  );
}
