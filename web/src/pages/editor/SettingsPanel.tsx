import { useEffect, useId, useState } from 'react';
import type { FieldProblem } from '../../api';
import { api, qs } from '../../api';
import { ExpressionInput } from '../../components/ExpressionInput';
import { FieldPicker, type PickerField } from '../../components/FieldPicker';
import { ReferenceSelect } from '../../components/ReferenceSelect';
import { type ConcurrencyDraft, MAX_SEARCH_FIELDS } from '../../lib/draft';
import type { Scope } from '../../lib/expressions';
import { Link } from '../../router';
import type { Page, Workflow } from '../../types';

/**
 * Workflow settings: the error workflow (SPEC 7c) — run (mode `error`) with the failure as its
 * trigger item when a production execution of this one fails, active or not; and the searchable
 * fields — fields of the trigger item indexed for the executions search; and concurrency
 * (SPEC 7d) — a key per execution, how many of one key run at once, and newest wins.
 */
export function SettingsPanel({
  workflowId,
  errorWorkflowId,
  onChange,
  searchFields,
  onSearchFieldsChange,
  fields,
  problems,
  concurrency,
  onConcurrencyChange,
  expressionFields,
  scope,
}: {
  workflowId: string;
  errorWorkflowId: string;
  onChange: (id: string) => void;
  searchFields: string[];
  onSearchFieldsChange: (paths: string[]) => void;
  /** Fields of the trigger item known from test events, offered by the field picker. */
  fields: PickerField[];
  problems: FieldProblem[];
  concurrency: ConcurrencyDraft;
  onConcurrencyChange: (c: ConcurrencyDraft) => void;
  /** Trigger-item fields as expressions (`{{ body.x }}`), for the concurrency fields' picker. */
  expressionFields: PickerField[];
  /** The latest test event as expressions see it, for the previews; undefined without one. */
  scope: Scope | undefined;
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
      <fieldset className="field" aria-describedby={`${id}-concurrency-help`}>
        <legend className="label">Concurrency</legend>
        <ExpressionInput
          label="Concurrency key"
          value={concurrency.key}
          onChange={(key) => onConcurrencyChange({ ...concurrency, key })}
          fields={expressionFields}
          scope={scope}
          placeholder="{{ body.data.object.customer }}"
          serverError={errorsAt('/settings/concurrency/key') || undefined}
          field="/settings/concurrency/key"
        />
        <label className="field">
          <span className="label">At a time per key</span>
          <input
            className={`input${errorsAt('/settings/concurrency/limit') ? ' invalid' : ''}`}
            inputMode="numeric"
            value={concurrency.limit}
            placeholder="1"
            data-field="/settings/concurrency/limit"
            onChange={(e) => onConcurrencyChange({ ...concurrency, limit: e.target.value })}
          />
        </label>
        {errorsAt('/settings/concurrency/limit') && (
          <p className="field-error">{errorsAt('/settings/concurrency/limit')}</p>
        )}
        <ExpressionInput
          label="Newest wins (optional)"
          value={concurrency.newestWins}
          onChange={(newestWins) => onConcurrencyChange({ ...concurrency, newestWins })}
          fields={expressionFields}
          scope={scope}
          placeholder="{{ body.data.object.updated }}"
          serverError={errorsAt('/settings/concurrency/newestWins') || undefined}
          field="/settings/concurrency/newestWins"
        />
        <p id={`${id}-concurrency-help`} className="help">
          Executions whose keys are equal (e.g. one Stripe customer) run one at a time — or as many as “at a
          time” says — in the order they arrived; other keys are not held back. A key that is empty or fails
          gives no key. With <em>newest wins</em> (a number or an ISO-8601 time), an event older than one of
          its key that has started is skipped (status <code>skipped</code>), so a late, older event never
          overwrites a newer one.
        </p>
      </fieldset>
    </section>
  );
}
