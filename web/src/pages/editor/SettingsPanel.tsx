import { useEffect, useId, useState } from 'react';
import type { FieldProblem } from '../../api';
import { api, qs } from '../../api';
import { Link } from '../../router';
import type { Page, Workflow } from '../../types';

/**
 * Workflow settings (SPEC 7c): the error workflow — run (mode `error`) with the failure as its
 * trigger item when a production execution of this one fails; it runs whether or not it is active.
 */
export function SettingsPanel({
  workflowId,
  errorWorkflowId,
  onChange,
  problems,
}: {
  workflowId: string;
  errorWorkflowId: string;
  onChange: (id: string) => void;
  problems: FieldProblem[];
}) {
  const id = useId();
  const [others, setOthers] = useState<Workflow[] | null>(null);
  useEffect(() => {
    api<Page<Workflow>>('GET', `/workflows${qs({ limit: 100 })}`).then(
      (p) => setOthers(p.items.filter((w) => w.id !== workflowId)),
      () => setOthers([]),
    );
  }, [workflowId]);
  const error = problems
    .filter((p) => p.field.startsWith('/settings'))
    .map((p) => p.message)
    .join('; ');
  const known = others?.some((w) => w.id === errorWorkflowId) ?? true;
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Settings</h2>
      <div className="field">
        <label htmlFor={`${id}-error-workflow`} className="label">
          Error workflow
        </label>
        <select
          id={`${id}-error-workflow`}
          className={`input${error ? ' invalid' : ''}`}
          value={errorWorkflowId}
          data-field="/settings/errorWorkflowId"
          aria-invalid={error ? true : undefined}
          aria-describedby={`${id}-help${error ? ` ${id}-error` : ''}`}
          onChange={(e) => onChange(e.target.value)}
        >
          <option value="">None</option>
          {errorWorkflowId && !known && (
            <option value={errorWorkflowId}>Unknown workflow {errorWorkflowId}</option>
          )}
          {others?.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
        {error && (
          <p id={`${id}-error`} className="field-error">
            {error}
          </p>
        )}
        <p id={`${id}-help`} className="help">
          When a production execution fails, this workflow runs with the failure (<code>error.message</code>,{' '}
          <code>error.step</code>, <code>execution.id</code>, <code>execution.workflowName</code>) as its
          trigger item, active or not — e.g. to post an alert to Slack.
          {errorWorkflowId && known && (
            <>
              {' '}
              <Link to={`/workflows/${encodeURIComponent(errorWorkflowId)}`}>Open it</Link>.
            </>
          )}
        </p>
      </div>
    </section>
  );
}
