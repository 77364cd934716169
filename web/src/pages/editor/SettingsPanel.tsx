import { useEffect, useId, useState } from 'react';
import type { FieldProblem } from '../../api';
import { api, qs } from '../../api';
import { FieldPicker, type PickerField } from '../../components/FieldPicker';
import { ReferenceSelect } from '../../components/ReferenceSelect';
import { MAX_SEARCH_FIELDS } from '../../lib/draft';
import { Link } from '../../router';
import type { Page, Workflow } from '../../types';

/**
 * Workflow settings: the error workflow (SPEC 7c) — run (mode `error`) with the failure as its
 * trigger item when a production execution of this one fails, active or not; and the searchable
 * fields (issue 19) — fields of the trigger item indexed for the executions search.
 */
export function SettingsPanel({
  workflowId,
  errorWorkflowId,
  onChange,
  searchFields,
  onSearchFieldsChange,
  fields,
  problems,
}: {
  workflowId: string;
  errorWorkflowId: string;
  onChange: (id: string) => void;
  searchFields: string[];
  onSearchFieldsChange: (paths: string[]) => void;
  /** Fields of the trigger item known from test events, offered by the field picker. */
  fields: PickerField[];
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
  const errorsAt = (prefix: string) =>
    problems
      .filter((p) => p.field.startsWith(prefix))
      .map((p) => p.message)
      .join('; ');
  const error = errorsAt('/settings/errorWorkflowId');
  const known = others?.some((w) => w.id === errorWorkflowId) ?? true;
  const fieldsError = errorsAt('/settings/searchFields');
  const set = (i: number, path: string) =>
    onSearchFieldsChange(searchFields.map((p, j) => (j === i ? path : p)));
  const full = searchFields.length >= MAX_SEARCH_FIELDS;
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Settings</h2>
      <ReferenceSelect
        label="Error workflow"
        value={errorWorkflowId}
        onChange={onChange}
        field="/settings/errorWorkflowId"
        error={error}
        options={others?.map((w) => [w.id, w.name]) ?? null}
        unknownLabel="Unknown workflow"
        help={
          <>
            When a production execution fails, this workflow runs with the failure (<code>error.message</code>
            , <code>error.step</code>, <code>execution.id</code>, <code>execution.workflowName</code>) as its
            trigger item, active or not — e.g. to post an alert to Slack.
            {errorWorkflowId && known && (
              <>
                {' '}
                <Link to={`/workflows/${encodeURIComponent(errorWorkflowId)}`}>Open it</Link>.
              </>
            )}
          </>
        }
      />
      <fieldset className="field" aria-describedby={`${id}-fields-help`}>
        <legend className="label">Searchable fields</legend>
        {searchFields.map((path, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the rows are positions in the list, edited in place
          <div className="row" key={i}>
            <input
              className={`input mono${fieldsError ? ' invalid' : ''}`}
              value={path}
              placeholder="body.order_id"
              aria-label={`Searchable field ${i + 1}`}
              data-field={`/settings/searchFields/${i}`}
              onChange={(e) => set(i, e.target.value.trim())}
            />
            <button
              type="button"
              className="button small"
              aria-label={`Remove searchable field ${path || i + 1}`}
              onClick={() => onSearchFieldsChange(searchFields.filter((_, j) => j !== i))}
            >
              Remove
            </button>
          </div>
        ))}
        <div className="row">
          <button
            type="button"
            className="button small"
            disabled={full}
            onClick={() => onSearchFieldsChange([...searchFields, ''])}
          >
            Add searchable field
          </button>
          {!full && fields.length > 0 && (
            <FieldPicker
              fields={fields}
              target="searchable fields"
              onPick={(f) =>
                !searchFields.includes(f.insert) &&
                onSearchFieldsChange([...searchFields.filter((p) => p !== ''), f.insert])
              }
            />
          )}
        </div>
        {fieldsError && <p className="field-error">{fieldsError}</p>}
        <p id={`${id}-fields-help`} className="help">
          Up to {MAX_SEARCH_FIELDS} fields of the trigger item, e.g. <code>body.order_id</code> or{' '}
          <code>headers.x-github-event</code>, indexed so that the{' '}
          <Link to={`/executions?workflowId=${encodeURIComponent(workflowId)}`}>executions search</Link> finds
          them at once among millions. Executions are indexed from when the version declaring a field runs
          (production: once published); older ones are searched without the index.
        </p>
      </fieldset>
    </section>
  );
}
