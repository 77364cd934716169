/** What the forms of the SPEC 7b step types share: their props, an expression field, a branch box. */
import type { ReactNode } from 'react';
import type { FieldProblem } from '../../../api';
import { ExpressionInput } from '../../../components/ExpressionInput';
import type { StepDraft } from '../../../lib/draft';
import type { SimResult } from '../../../lib/simulate';
import type { StepContext } from '../StepSettings';

export type RenderList = (
  steps: StepDraft[],
  at: string,
  title: string,
  onChange: (steps: StepDraft[]) => void,
) => ReactNode;

export interface Props {
  step: StepDraft;
  at: string;
  label: string;
  onChange: (patch: Partial<StepDraft>) => void;
  context: StepContext;
  problems: FieldProblem[];
  result: SimResult | undefined;
  renderList: RenderList;
}

/** The problems at a field (or under it), as one sentence; undefined when there are none. */
export function problemAt(problems: FieldProblem[], field: string): string | undefined {
  const found = problems.filter((p) => p.field === field || p.field.startsWith(`${field}/`));
  return found.length ? found.map((p) => p.message).join('; ') : undefined;
}

/** An expression field of the step, with the picker, the preview and its problems. */
export function Expr({
  step,
  at,
  onChange,
  context,
  problems,
  k,
  title,
  placeholder,
}: Props & {
  k: 'condition' | 'value' | 'items' | 'until' | 'message' | 'seconds';
  title: string;
  placeholder?: string;
}) {
  return (
    <ExpressionInput
      label={title}
      value={step[k]}
      onChange={(v) => onChange({ [k]: v })}
      fields={context.fields}
      scope={context.scope}
      placeholder={placeholder}
      serverError={problemAt(problems, `${at}/${k}`)}
      field={`${at}/${k}`}
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
