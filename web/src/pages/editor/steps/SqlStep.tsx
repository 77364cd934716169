/**
 * `sql` (SPEC 7e): the credential (postgres or mysql only), the statement in the code editor with
 * SQL highlighting in the credential's dialect, and its parameters, one expression each with the
 * field picker, named as the statement refers to them ($1… or ?).
 */
import { useCallback, useState } from 'react';
import { CodeEditor } from '../../../components/CodeEditor';
import { ExpressionInput } from '../../../components/ExpressionInput';
import { placeholder, type SqlDraft } from '../../../lib/steps/sql';
import { row } from '../../../lib/steps/values';
import { CredentialPicker } from './CredentialPicker';
import { type Props, problemAt } from './shared';

const SQL_CREDENTIALS = ['postgres', 'mysql'] as const;

export function SqlFields({ step, at, onChange, problems, label, context }: Props<SqlDraft>) {
  const [dialect, setDialect] = useState<string | undefined>(undefined);
  const onType = useCallback((type: string | undefined) => setDialect(type), []);
  const params = step.params;
  const setParam = (key: string, value: string) =>
    onChange({ params: params.map((p) => (p.key === key ? { ...p, value } : p)) });
  const mark = dialect === 'mysql' ? '?' : '$1, $2…';
  return (
    <>
      <CredentialPicker
        value={step.credential}
        onChange={(credential) => onChange({ credential })}
        field={`${at}/credential`}
        error={problemAt(problems, `${at}/credential`)}
        types={SQL_CREDENTIALS}
        onType={onType}
      />
      <CodeEditor
        label={`SQL of ${label}`}
        value={step.sql}
        onChange={(sql) => onChange({ sql })}
        field={`${at}/query`}
        error={problemAt(problems, `${at}/query`)}
        language={dialect === 'mysql' ? 'mysql' : dialect === 'postgres' ? 'postgres' : 'sql'}
        help={`One statement, taken as written: values go in the parameters below, referred to as ${mark} — never {{ }} in the SQL, so data can never change the statement.`}
      />
      {step.paramsExpr !== '' ? (
        <ExpressionInput
          label="Parameters (one expression giving the array)"
          value={step.paramsExpr}
          onChange={(paramsExpr) => onChange({ paramsExpr })}
          fields={context.fields}
          scope={context.scope}
          serverError={problemAt(problems, `${at}/params`)}
          field={`${at}/params`}
        />
      ) : (
        <fieldset className="rows">
          <legend className="label">Parameters</legend>
          {params.length === 0 && <p className="small muted">No parameters: the statement takes none.</p>}
          {params.map((p, i) => (
            <div key={p.key} className="kv-row kv-single">
              <div className="kv-value">
                <ExpressionInput
                  label={placeholder(dialect, i)}
                  value={p.value}
                  onChange={(value) => setParam(p.key, value)}
                  fields={context.fields}
                  scope={context.scope}
                  placeholder="{{ body.id }}"
                  serverError={problemAt(problems, `${at}/params/${i}`)}
                  field={`${at}/params/${i}`}
                />
              </div>
              <button
                type="button"
                className="button small icon kv-remove"
                aria-label={`Remove parameter ${i + 1}`}
                onClick={() => onChange({ params: params.filter((x) => x.key !== p.key) })}
              >
                ✕
              </button>
            </div>
          ))}
          <button
            type="button"
            className="button small"
            onClick={() => onChange({ params: [...params, row()] })}
          >
            + Add parameter
          </button>
        </fieldset>
      )}
      <ExpressionInput
        label="Most rows to read"
        value={step.maxRows}
        onChange={(maxRows) => onChange({ maxRows })}
        fields={context.fields}
        scope={context.scope}
        placeholder="1000"
        serverError={problemAt(problems, `${at}/maxRows`)}
        field={`${at}/maxRows`}
      />
      <ExpressionInput
        label="Timeout (ms)"
        value={step.timeoutMs}
        onChange={(timeoutMs) => onChange({ timeoutMs })}
        fields={context.fields}
        scope={context.scope}
        placeholder="10000"
        serverError={problemAt(problems, `${at}/timeoutMs`)}
        field={`${at}/timeoutMs`}
      />
    </>
  );
}
