/**
 * The forms of the SPEC 7b step types: `if`, `switch`, `forEach` (their nested step lists edited in
 * place, through `renderList`, which is the editor's own StepList), `code`, `wait` and `fail`.
 */
import { type ReactNode, useId } from 'react';
import type { FieldProblem } from '../../../api';
import { CodeEditor } from '../../../components/CodeEditor';
import { ExpressionInput } from '../../../components/ExpressionInput';
import { type CaseDraft, newCase, type StepDraft } from '../../../lib/draft';
import type { SimResult } from '../../../lib/simulate';
import type { StepContext } from '../StepsPanel';

export const FLOW_FORM_TYPES = new Set(['if', 'switch', 'forEach', 'code', 'wait', 'fail']);

export type RenderList = (
  steps: StepDraft[],
  at: string,
  title: string,
  onChange: (steps: StepDraft[]) => void,
) => ReactNode;

interface Props {
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

/** Fields of these types that show their problems in place (the rest are listed below the step). */
export const FLOW_INLINE_FIELDS = ['items', 'value', 'source', 'seconds', 'until', 'message'];

export function FlowFields(props: Props) {
  switch (props.step.type) {
    case 'if':
      return <IfFields {...props} />;
    case 'switch':
      return <SwitchFields {...props} />;
    case 'forEach':
      return <ForEachFields {...props} />;
    case 'code':
      return <CodeFields {...props} />;
    case 'wait':
      return <WaitFields {...props} />;
    case 'fail':
      return (
        <Expr
          {...props}
          k="message"
          title="Message"
          placeholder="Unknown event {{ headers.`x-github-event` }}"
        />
      );
    default:
      return null;
  }
}

function Expr({
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
function Branch({
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

function IfFields(props: Props) {
  const id = useId();
  const { step, at, onChange, renderList, result } = props;
  const taken = (b: 'then' | 'else') => (result?.branch === undefined ? undefined : result.branch === b);
  return (
    <>
      <Expr {...props} k="condition" title="Condition" placeholder="{{ body.amount > 100 }}" />
      <div className="branches">
        <Branch id={`${id}-then`} title="Then (condition true)" taken={taken('then')}>
          {renderList(step.thenSteps, `${at}/then`, `Then of ${props.label}`, (thenSteps) =>
            onChange({ thenSteps }),
          )}
        </Branch>
        <Branch id={`${id}-else`} title="Else (false or nothing)" taken={taken('else')}>
          {renderList(step.elseSteps, `${at}/else`, `Else of ${props.label}`, (elseSteps) =>
            onChange({ elseSteps }),
          )}
        </Branch>
      </div>
    </>
  );
}

function SwitchFields(props: Props) {
  const id = useId();
  const { step, at, onChange, renderList, result, context, problems, label } = props;
  const setCase = (key: string, patch: Partial<CaseDraft>) =>
    onChange({ cases: step.cases.map((c) => (c.key === key ? { ...c, ...patch } : c)) });
  const moveCase = (i: number, by: number) => {
    const cases = [...step.cases];
    const [c] = cases.splice(i, 1);
    cases.splice(i + by, 0, c!);
    onChange({ cases });
    requestAnimationFrame(() => document.getElementById(`${id}-case-${c!.key}`)?.focus());
  };
  const removeCase = (i: number) => {
    const next = step.cases[i + 1] ?? step.cases[i - 1];
    onChange({ cases: step.cases.filter((_, j) => j !== i) });
    requestAnimationFrame(() =>
      document.getElementById(next ? `${id}-case-${next.key}` : `${id}-add-case`)?.focus(),
    );
  };
  const addCase = () => {
    const c = newCase();
    onChange({ cases: [...step.cases, c] });
    requestAnimationFrame(() => document.getElementById(`${id}-case-${c.key}`)?.focus());
  };
  const taken = (b: number | 'default') =>
    result?.branch === undefined ? (result ? false : undefined) : result.branch === b;
  return (
    <>
      <Expr {...props} k="value" title="Value to route on" placeholder='{{ headers."x-github-event" }}' />
      <p className="help">The first case that matches runs; when none does, the default steps run.</p>
      <div className="branches">
        {step.cases.map((c, i) => {
          const caseAt = `${at}/cases/${i}`;
          const name = `case ${i + 1}`;
          return (
            <Branch
              key={c.key}
              id={`${id}-case-${c.key}`}
              title={`Case ${i + 1}`}
              taken={taken(i)}
              testId="switch-case"
            >
              <div className="case-head">
                <div className="field case-kind">
                  <label htmlFor={`${id}-kind-${c.key}`} className="label small">
                    Matches when
                  </label>
                  <select
                    id={`${id}-kind-${c.key}`}
                    className="input"
                    value={c.kind}
                    onChange={(e) => setCase(c.key, { kind: e.target.value as CaseDraft['kind'] })}
                  >
                    <option value="equals">the value equals</option>
                    <option value="when">a condition is true</option>
                  </select>
                </div>
                <div className="step-tools">
                  <button
                    type="button"
                    className="button small icon"
                    disabled={i === 0}
                    onClick={() => moveCase(i, -1)}
                    aria-label={`Move ${name} of ${label} up`}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    className="button small icon"
                    disabled={i === step.cases.length - 1}
                    onClick={() => moveCase(i, 1)}
                    aria-label={`Move ${name} of ${label} down`}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    className="button small danger-outline"
                    onClick={() => removeCase(i)}
                    aria-label={`Remove ${name} of ${label}`}
                  >
                    Remove case
                  </button>
                </div>
              </div>
              {c.kind === 'equals' ? (
                <div className="field">
                  <label htmlFor={`${id}-eq-${c.key}`} className="label">
                    Equals (JSON: <code>"push"</code>, <code>42</code>, <code>true</code>; other text is a
                    string)
                  </label>
                  <input
                    id={`${id}-eq-${c.key}`}
                    className={`input mono${problemAt(problems, `${caseAt}/equals`) ? ' invalid' : ''}`}
                    value={c.equals}
                    data-field={`${caseAt}/equals`}
                    aria-invalid={problemAt(problems, `${caseAt}/equals`) ? true : undefined}
                    onChange={(e) => setCase(c.key, { equals: e.target.value })}
                    spellCheck={false}
                  />
                  {problemAt(problems, `${caseAt}/equals`) && (
                    <p className="field-error">{problemAt(problems, `${caseAt}/equals`)}</p>
                  )}
                </div>
              ) : (
                <ExpressionInput
                  label={`Condition of case ${i + 1}`}
                  value={c.when}
                  onChange={(when) => setCase(c.key, { when })}
                  fields={context.fields}
                  scope={context.scope}
                  placeholder="{{ body.amount > 100 }}"
                  serverError={problemAt(problems, `${caseAt}/when`)}
                  field={`${caseAt}/when`}
                />
              )}
              {renderList(c.steps, `${caseAt}/steps`, `case ${i + 1} of ${label}`, (steps) =>
                setCase(c.key, { steps }),
              )}
            </Branch>
          );
        })}
        <button type="button" id={`${id}-add-case`} className="button small" onClick={addCase}>
          + Add a case
        </button>
        <Branch id={`${id}-default`} title="Default (no case matches)" taken={taken('default')}>
          {renderList(step.defaultSteps, `${at}/default`, `the default of ${label}`, (defaultSteps) =>
            onChange({ defaultSteps }),
          )}
        </Branch>
      </div>
    </>
  );
}

function ForEachFields(props: Props) {
  const id = useId();
  const { step, at, onChange, renderList, label } = props;
  return (
    <>
      <Expr {...props} k="items" title="Items (a list)" placeholder="{{ body.lines }}" />
      <p className="help">
        The steps inside run once per element: <code>$item</code> is the element, <code>$index</code> its
        position (from 0), and <code>$</code> the element for the first step. The output is the list of each
        run's last output.
      </p>
      <Branch id={`${id}-loop`} title="For each element" taken={undefined}>
        {renderList(step.loopSteps, `${at}/steps`, `the loop of ${label}`, (loopSteps) =>
          onChange({ loopSteps }),
        )}
      </Branch>
    </>
  );
}

function CodeFields({ step, at, onChange, problems, label, result }: Props) {
  const id = useId();
  const error = problemAt(problems, `${at}/source`);
  return (
    <div className="field">
      <CodeEditor
        label={`JavaScript of ${label}`}
        value={step.source}
        onChange={(source) => onChange({ source })}
        field={`${at}/source`}
        error={error}
      />
      <p className="help">
        A function body run on the server in a sandbox (QuickJS): <code>$input</code>, <code>$trigger</code>,{' '}
        <code>$steps</code>, <code>$execution</code> are copies; <code>return</code> gives the output (JSON);{' '}
        <code>console.log</code> lines are kept. No <code>require</code>, <code>fetch</code> or timers.
      </p>
      {result?.logs && (
        <>
          <p className="label small" id={`${id}-logs`}>
            Console output in the last test run
          </p>
          <pre className="code-logs" role="log" aria-labelledby={`${id}-logs`}>
            {result.logs.join('\n')}
          </pre>
        </>
      )}
    </div>
  );
}

function WaitFields(props: Props) {
  const id = useId();
  const { step, onChange } = props;
  return (
    <>
      <fieldset className="rows">
        <legend className="label">Wait</legend>
        <label className="check">
          <input
            type="radio"
            name={`${id}-by`}
            checked={step.waitBy === 'seconds'}
            onChange={() => onChange({ waitBy: 'seconds' })}
          />
          for a number of seconds
        </label>
        <label className="check">
          <input
            type="radio"
            name={`${id}-by`}
            checked={step.waitBy === 'until'}
            onChange={() => onChange({ waitBy: 'until' })}
          />
          until a time
        </label>
      </fieldset>
      {step.waitBy === 'seconds' ? (
        <Expr {...props} k="seconds" title="Seconds" placeholder="60" />
      ) : (
        <Expr
          {...props}
          k="until"
          title="Until (ISO-8601 time, at most 30 days ahead)"
          placeholder="{{ body.remindAt }}"
        />
      )}
      <p className="help">
        The execution waits without holding a worker, then goes on with this step's input.
      </p>
    </>
  );
}
