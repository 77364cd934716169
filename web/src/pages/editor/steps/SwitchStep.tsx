/** `switch` (SPEC 7b): the value, cases (`equals` JSON or `when` condition) with their lists, and Default. */
import { useId } from 'react';
import { ExpressionInput } from '../../../components/ExpressionInput';
import { type CaseDraft, newCase, type SwitchDraft } from '../../../lib/steps/flow';
import { Branch, Expr, type Props, problemAt } from './shared';

export function SwitchFields(props: Props<SwitchDraft>) {
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
          {renderList(step.default, `${at}/default`, `the default of ${label}`, (list) =>
            onChange({ default: list }),
          )}
        </Branch>
      </div>
    </>
  );
}
