import { useId } from 'react';
import type { FieldProblem } from '../../../api';
import type { StepDraft } from '../../../lib/draft';
import { RETRY_ON } from '../../../lib/steps/http';
import { problemAt } from './shared';

const ON_LABELS: Record<(typeof RETRY_ON)[number], string> = {
  network: 'a network error (no answer)',
  '429': '429 Too Many Requests',
  '5xx': 'a 5xx server error',
};

/** The http step's retry (SPEC 7c): attempts, backoff, and which failures are retried. */
export function RetryFields({
  step,
  at,
  onChange,
  problems,
}: {
  step: StepDraft;
  at: string;
  onChange: (patch: Partial<StepDraft>) => void;
  problems: FieldProblem[];
}) {
  const id = useId();
  const attemptsError = problemAt(problems, `${at}/retry/attempts`);
  const backoffError = problemAt(problems, `${at}/retry/backoffMs`);
  const on = (key: string, checked: boolean) =>
    onChange({
      retryOnSet: true,
      retryOn: checked
        ? [...step.retryOn.filter((o) => o !== key), key]
        : step.retryOn.filter((o) => o !== key),
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
          {RETRY_ON.map((o) => (
            <label key={o} className="check">
              <input
                type="checkbox"
                checked={step.retryOn.includes(o)}
                onChange={(e) => on(o, e.target.checked)}
              />
              {ON_LABELS[o]}
            </label>
          ))}
          <p className="help">
            Pauses double each time (with jitter); a <code>Retry-After</code> answer is honoured (up to an
            hour). A pause of a second or more parks the execution as waiting instead of holding a worker.
          </p>
        </>
      )}
    </fieldset>
  );
}
