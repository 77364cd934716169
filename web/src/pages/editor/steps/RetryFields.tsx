import { useId } from 'react';
import type { FieldProblem } from '../../../api';
import { RETRY_ON } from '../../../lib/steps/http';
import type { RetryDraft } from '../../../lib/steps/retry';
import { problemAt } from './shared';

const ON_LABELS: Record<(typeof RETRY_ON)[number], string> = {
  network: 'a network error (no answer)',
  '429': '429 Too Many Requests',
  '5xx': 'a 5xx server error',
};

const HTTP_OPTIONS = RETRY_ON.map((o) => ({ value: o, label: ON_LABELS[o] }));

/**
 * A step's retry (SPEC 7c: `http`; 7e: `email`): attempts, backoff, and which failures are retried
 * (`options`: the http step's unless given; `defaults`: what is retried while `on` is not set).
 */
export function RetryFields({
  step,
  at,
  onChange,
  problems,
  options = HTTP_OPTIONS,
  defaults,
  help,
}: {
  step: RetryDraft;
  at: string;
  onChange: (patch: Partial<RetryDraft>) => void;
  problems: FieldProblem[];
  options?: { value: string; label: string }[];
  defaults?: readonly string[];
  help?: string;
}) {
  const checked = step.retryOnSet || !defaults ? step.retryOn : defaults;
  const id = useId();
  const attemptsError = problemAt(problems, `${at}/retry/attempts`);
  const backoffError = problemAt(problems, `${at}/retry/backoffMs`);
  const toggle = (key: string, on: boolean) =>
    onChange({
      retryOnSet: true,
      retryOn: on ? [...checked.filter((o) => o !== key), key] : checked.filter((o) => o !== key),
    });
  return (
    <fieldset className="rows">
      <legend className="label">Retry</legend>
      <div className="row">
        <div className="field compact">
          <label htmlFor={`${id}-attempts`} className="label small">
            Attempts (blank: one)
          </label>
          <input
            id={`${id}-attempts`}
            className={`input${attemptsError ? ' invalid' : ''}`}
            inputMode="numeric"
            value={step.retryAttempts}
            placeholder="1"
            data-field={`${at}/retry/attempts`}
            aria-invalid={attemptsError ? true : undefined}
            aria-describedby={attemptsError ? `${id}-attempts-error` : undefined}
            onChange={(e) => onChange({ retryAttempts: e.target.value })}
          />
          {attemptsError && (
            <p id={`${id}-attempts-error`} className="field-error">
              {attemptsError}
            </p>
          )}
        </div>
        <div className="field compact">
          <label htmlFor={`${id}-backoff`} className="label small">
            First pause (ms)
          </label>
          <input
            id={`${id}-backoff`}
            className={`input${backoffError ? ' invalid' : ''}`}
            inputMode="numeric"
            value={step.retryBackoffMs}
            placeholder="1000"
            disabled={step.retryAttempts.trim() === ''}
            data-field={`${at}/retry/backoffMs`}
            aria-invalid={backoffError ? true : undefined}
            aria-describedby={backoffError ? `${id}-backoff-error` : undefined}
            onChange={(e) => onChange({ retryBackoffMs: e.target.value })}
          />
          {backoffError && (
            <p id={`${id}-backoff-error`} className="field-error">
              {backoffError}
            </p>
          )}
        </div>
      </div>
      {step.retryAttempts.trim() !== '' && (
        <>
          <p className="small">Retry after:</p>
          {options.map((o) => (
            <label key={o.value} className="check">
              <input
                type="checkbox"
                checked={checked.includes(o.value)}
                onChange={(e) => toggle(o.value, e.target.checked)}
              />
              {o.label}
            </label>
          ))}
          {help ? (
            <p className="help">{help}</p>
          ) : (
            <p className="help">
              Pauses double each time (with jitter); a <code>Retry-After</code> answer is honoured (up to an
              hour). A pause of a second or more parks the execution as waiting instead of holding a worker.
            </p>
          )}
        </>
      )}
    </fieldset>
  );
}
