import { useEffect, useId, useMemo, useRef, useState } from 'react';
import {
  describeMissing,
  hasExpression,
  type Missing,
  render,
  type Scope,
  templateErrors,
} from '../lib/expressions';
import { short } from '../lib/format';
import { maskedSecretsOf, namesSecrets, useEditorVariables, variableFields, varsOf } from '../lib/variables';
import { FieldPicker, type PickerField } from './FieldPicker';

/** Said at a field that names `$secrets` where its step type does not send them. */
const SECRETS_NOT_HERE =
  '$secrets can be used only where a secret is sent: an HTTP request’s URL, headers, query and body, an email’s fields, an SQL query’s parameters. Use $vars for a variable that is not secret.';

/**
 * A configuration value that may hold `{{ expressions }}`: a field picker inserts references at
 * the caret (the test event's fields, earlier outputs, `$vars` and, where the step sends them,
 * `$secrets`), syntax errors show at once, and a preview evaluates it against the latest test
 * event (a secret as "***").
 */
export function ExpressionInput({
  label,
  value,
  onChange,
  fields,
  scope,
  multiline,
  placeholder,
  hideLabel,
  serverError,
  required,
  toValue,
  field,
}: {
  label: string;
  value: string;
  /** `picked` is set when the change inserted a field from the picker. */
  onChange: (value: string, picked?: PickerField) => void;
  fields: PickerField[];
  /** What the expression sees; undefined when there is no test event to preview against. */
  scope: Scope | undefined;
  multiline?: boolean;
  placeholder?: string;
  hideLabel?: boolean;
  serverError?: string;
  required?: boolean;
  /** The configuration value the text stands for (a JSON body is parsed); the text itself by default. */
  toValue?: (text: string) => unknown;
  /** JSON pointer of the value in the workflow, for the links of the error summary. */
  field?: string;
}) {
  const id = useId();
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const caret = useRef<{ start: number; end: number } | null>(null);
  const pendingCaret = useRef<number | null>(null);
  const configValue = useMemo(() => (toValue ? toValue(value) : value), [value, toValue]);
  const { variables, secretsAllowed } = useEditorVariables();
  const secrets = secretsAllowed(field);
  const offered = useMemo(
    () => [...fields, ...variableFields(variables, secrets)],
    [fields, variables, secrets],
  );
  const withVariables = useMemo(
    () =>
      scope && {
        ...scope,
        vars: varsOf(variables),
        ...(secrets ? { secrets: maskedSecretsOf(variables) } : {}),
      },
    [scope, variables, secrets],
  );
  const syntaxError =
    templateErrors(configValue)[0]?.message ??
    (!secrets && hasExpression(value) && namesSecrets(value) ? SECRETS_NOT_HERE : undefined);
  const [preview, setPreview] = useState<{ ok: boolean; text: string; missing?: string[] } | null>(null);

  useEffect(() => {
    if (syntaxError || !hasExpression(value) || !withVariables) {
      setPreview(null);
      return;
    }
    let cancelled = false;
    const timer = setTimeout(() => {
      const missing: Missing[] = [];
      render(configValue, withVariables, missing).then(
        (result) =>
          !cancelled &&
          setPreview({
            ok: true,
            text: result === undefined ? 'nothing (undefined)' : short(result, 300),
            // Keys and text parts that vanish are named, not silently dropped.
            missing: describeMissing(missing),
          }),
        (err: Error) => !cancelled && setPreview({ ok: false, text: err.message }),
      );
    }, 150);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [value, configValue, withVariables, syntaxError]);

  useEffect(() => {
    if (pendingCaret.current === null || !ref.current) return;
    ref.current.focus();
    ref.current.setSelectionRange(pendingCaret.current, pendingCaret.current);
    pendingCaret.current = null;
  });

  const remember = () => {
    const el = ref.current;
    if (el)
      caret.current = { start: el.selectionStart ?? value.length, end: el.selectionEnd ?? value.length };
  };

  const insert = (field: PickerField) => {
    const text = field.text ?? `{{ ${field.insert} }}`;
    const { start, end } = caret.current ?? { start: value.length, end: value.length };
    const next = value.slice(0, start) + text + value.slice(end);
    pendingCaret.current = start + text.length;
    onChange(next, field);
  };

  const error = serverError ?? syntaxError;
  const describedBy =
    [error ? `${id}-error` : '', preview ? `${id}-preview` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    ref,
    value,
    placeholder,
    required,
    className: `input mono${error ? ' invalid' : ''}`,
    'data-field': field,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
    spellCheck: false,
    autoComplete: 'off',
    onSelect: remember,
    onKeyUp: remember,
    onBlur: remember,
  };
  return (
    <div className="expr">
      <div className="expr-head">
        <label htmlFor={id} className={hideLabel ? 'visually-hidden' : 'label'}>
          {label}
        </label>
        <FieldPicker fields={offered} onPick={insert} target={label} />
      </div>
      {multiline ? (
        <textarea {...common} rows={4} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input {...common} type="text" onChange={(e) => onChange(e.target.value)} />
      )}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
      {!error && preview && (
        <p id={`${id}-preview`} className={preview.ok ? 'expr-preview' : 'field-error'}>
          {preview.ok ? (
            <>
              <span className="muted">Preview: </span>
              <code className="expr-value">{preview.text}</code>
              {preview.missing && preview.missing.length > 0 && (
                <span className="expr-missing">
                  {preview.missing.map((line) => (
                    <span key={line} className="expr-missing-line">
                      {line}
                    </span>
                  ))}
                </span>
              )}
            </>
          ) : (
            preview.text
          )}
        </p>
      )}
    </div>
  );
}
