import { useId } from 'react';
import type { FieldProblem } from '../../api';
import { ExpressionInput } from '../../components/ExpressionInput';
import type { PickerField } from '../../components/FieldPicker';
import { type Row, row, STEP_TYPES, type StepDraft, textToBody } from '../../lib/draft';
import { formFor } from '../../lib/steps';
import { httpUrlProblem } from '../../lib/steps/http';
import type { Scope } from '../../lib/expressions';
import type { SimResult } from '../../lib/simulate';
import type { ResponseMode } from '../../types';
import { StepRunResult } from './StepRunResult';
import { CredentialPicker } from './steps/CredentialPicker';
import { EmailStep } from './steps/EmailStep';
import { RetryFields } from './steps/RetryFields';
import { SqlFields } from './steps/SqlStep';
import type { Props } from './steps/shared';
import {
  FLOW_FORM_TYPES,
  FLOW_INLINE_FIELDS,
  FlowFields,
  problemAt,
  type RenderList,
} from './steps/FlowFields';

/** The email step's fields whose problems its form shows at the field. */
const EMAIL_INLINE_FIELDS = ['to', 'cc', 'bcc', 'replyTo', 'subject', 'text', 'html', 'attachments'];
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** The last name in a picked path, as a field name: `body.param1` → `param1`. */
function suggestName(label: string): string {
  const last =
    label
      .replace(/\[\]$/, '')
      .split(/[.[\]"]+/)
      .filter(Boolean)
      .pop() ?? '';
  return /^[A-Za-z_][\w-]*$/.test(last) ? last : '';
}

export interface StepContext {
  fields: PickerField[];
  scope: Scope | undefined;
}

/**
 * The settings of the selected step, in the side panel or sheet: its name, its type's form, move
 * and remove. The lists a branch or loop holds are edited in the flow's lanes; here they are named
 * with their size.
 */
export function StepSettings({
  headingId,
  step,
  at,
  index,
  count,
  onChange,
  onMove,
  onRemove,
  context,
  result,
  problems,
  responseMode,
  place,
}: {
  headingId: string;
  step: StepDraft;
  /** JSON pointer of the step (`/steps/0`, `/steps/1/cases/0/steps/2`). */
  at: string;
  index: number;
  count: number;
  onChange: (patch: Partial<StepDraft>) => void;
  onMove: (by: number) => void;
  onRemove: () => void;
  context: StepContext;
  result: SimResult | undefined;
  problems: FieldProblem[];
  responseMode: ResponseMode;
  /** The nested list it is in (“case 1 of route”), said to screen readers with its number. */
  place?: string;
}) {
  const id = useId();
  const label = step.name || `step ${index + 1}`;
  const typeLabel = STEP_TYPES.find((t) => t.type === step.type)?.label ?? step.type;
  // Problems of the name and of expression fields show at the field; the rest below the step.
  const nameError = problemAt(problems, `${at}/name`);
  const inline = [
    'name',
    'condition',
    'url',
    'credential',
    'retry',
    'body',
    'timeoutMs',
    'status',
    'query',
    'params',
    'maxRows',
    ...(step.type === 'email' ? EMAIL_INLINE_FIELDS : []),
    ...FLOW_INLINE_FIELDS,
  ].map((k) => `${at}/${k}`);
  // A nested step's problems show in its own card; a case's value or condition at its field.
  const nested = new RegExp(
    `^${at.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:(?:then|else|default|steps|cases/\\d+/steps)/\\d+|cases/\\d+/(?:equals|when)$)`,
  );
  const elsewhere = problems.filter(
    (p) => !nested.test(p.field) && !inline.some((f) => p.field === f || p.field.startsWith(`${f}/`)),
  );
  const renderList: RenderList = (steps, _listAt, title) => (
    <p className="small muted lane-note">
      {steps.length === 0 ? 'No steps' : steps.length === 1 ? '1 step' : `${steps.length} steps`} in {title}:
      add, move and edit them in the flow.
    </p>
  );
  /** What every step type's own form component takes. */
  const typeForm: Props = { step, at, label, onChange, context, problems, result, renderList };
  const expr = (
    key: 'condition' | 'url' | 'body' | 'timeoutMs' | 'status',
    title: string,
    opts: { multiline?: boolean; placeholder?: string } = {},
  ) => (
    <ExpressionInput
      label={title}
      value={step[key]}
      onChange={(v) => onChange({ [key]: v })}
      fields={context.fields}
      scope={context.scope}
      multiline={opts.multiline}
      placeholder={opts.placeholder}
      serverError={
        problemAt(problems, `${at}/${key}`) ?? (key === 'url' ? httpUrlProblem(step.url, true) : undefined)
      }
      field={`${at}/${key}`}
      toValue={key === 'body' ? textToBody : undefined}
    />
  );
  const rows = (key: keyof typeof ROWS) => (
    <Rows
      {...ROWS[key]}
      rows={step[key]}
      onChange={(value) => onChange({ [key]: value })}
      context={context}
      autoName={key === 'fields'}
    />
  );

  return (
    <div className={`step step-settings${result?.lastRun?.failed ? ' step-failed' : ''}`}>
      <div className="step-head">
        <span className="step-number" aria-hidden="true">
          {index + 1}
        </span>
        <h3 id={headingId} tabIndex={-1} className="step-title" data-field={at}>
          <span className="visually-hidden">
            Step {index + 1}
            {place ? ` of ${place}` : ''}:{' '}
          </span>
          {typeLabel}
        </h3>
        <div className="step-tools">
          <button
            type="button"
            className="button small icon"
            onClick={() => onMove(-1)}
            disabled={index === 0}
            aria-label={`Move ${label} up`}
          >
            ↑
          </button>
          <button
            type="button"
            className="button small icon"
            onClick={() => onMove(1)}
            disabled={index === count - 1}
            aria-label={`Move ${label} down`}
          >
            ↓
          </button>
          <button
            type="button"
            className="button small danger-outline"
            onClick={onRemove}
            aria-label={`Remove ${label}`}
          >
            Remove
          </button>
        </div>
      </div>

      <StepRunResult lastRun={result?.lastRun} />

      <div className="field">
        <label htmlFor={`${id}-name`} className="label">
          Step name
        </label>
        <input
          id={`${id}-name`}
          className={`input${nameError ? ' invalid' : ''}`}
          value={step.name}
          data-field={`${at}/name`}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={`${id}-name-help${nameError ? ` ${id}-name-error` : ''}`}
          onChange={(e) => onChange({ name: e.target.value })}
        />
        {nameError && (
          <p id={`${id}-name-error`} className="field-error">
            {nameError}
          </p>
        )}
        <p id={`${id}-name-help`} className="help">
          Later steps read its output as <code>$steps.{step.name || 'name'}</code>.
        </p>
      </div>

      {step.type === 'set' && (
        <>
          {rows('fields')}
          <label className="check">
            <input
              type="checkbox"
              checked={step.keepInput}
              onChange={(e) => onChange({ keepInput: e.target.checked })}
            />
            Keep the input's other fields
          </label>
        </>
      )}
      {step.type === 'filter' && expr('condition', 'Condition', { placeholder: '{{ body.amount > 100 }}' })}
      {step.type === 'http' && (
        <>
          <div className="field">
            <label htmlFor={`${id}-method`} className="label">
              Method
            </label>
            <select
              id={`${id}-method`}
              className="input"
              value={step.method}
              onChange={(e) => onChange({ method: e.target.value })}
            >
              {HTTP_METHODS.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </div>
          {expr('url', 'URL', { placeholder: 'https://example.com/api' })}
          <CredentialPicker
            value={step.credential}
            onChange={(credential) => onChange({ credential })}
            field={`${at}/credential`}
            error={problemAt(problems, `${at}/credential`)}
          />
          {rows('headers')}
          {rows('query')}
          {step.method !== 'GET' &&
            step.method !== 'HEAD' &&
            expr('body', 'Body (JSON or text)', {
              multiline: true,
              placeholder: '{"name": "{{ body.param1 }}"}',
            })}
          {expr('timeoutMs', 'Timeout (ms)', { placeholder: '30000' })}
          <label className="check">
            <input
              type="checkbox"
              checked={step.failOnError}
              onChange={(e) => onChange({ failOnError: e.target.checked })}
            />
            Fail the run when the answer is not 2xx
          </label>
          <RetryFields step={step} at={at} onChange={onChange} problems={problems} />
        </>
      )}
      {step.type === 'email' && <EmailStep {...typeForm} />}
      {step.type === 'respond' && (
        <>
          {responseMode !== 'respondStep' && (
            <p className="notice small">
              The trigger's response is not set to "From a Respond step", so this answer is not sent. Change
              it under Webhook trigger → Response.
            </p>
          )}
          {expr('status', 'Status', { placeholder: '200' })}
          {rows('headers')}
          {expr('body', 'Body (JSON or text; empty sends the input)', {
            multiline: true,
            placeholder: '{"ok": true}',
          })}
        </>
      )}
      {step.type === 'sql' && <SqlFields {...typeForm} />}
      {FLOW_FORM_TYPES.has(step.type) && <FlowFields {...typeForm} />}
      {!formFor(step.type) && (
        <div className="field">
          <label htmlFor={`${id}-raw`} className="label">
            Configuration (JSON)
          </label>
          <textarea
            id={`${id}-raw`}
            className="input mono"
            rows={6}
            value={step.raw}
            onChange={(e) => onChange({ raw: e.target.value })}
          />
        </div>
      )}

      {elsewhere.length > 0 && (
        <ul className="field-error step-problems" aria-label={`Problems in ${label}`}>
          {elsewhere.map((p) => (
            <li key={`${p.field}:${p.message}`}>
              {describeField(p.field, at)} {p.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function describeField(field: string, at: string): string {
  const rest = field.slice(at.length).replace(/^\//, '');
  return rest ? `${rest.replace(/\//g, ' › ')}:` : 'This step';
}

/** What each list of name–value rows is called, by the step field that holds it. */
const ROWS = {
  fields: { title: 'Fields', addLabel: 'Add field', nameLabel: 'Field name' },
  headers: { title: 'Headers', addLabel: 'Add header', nameLabel: 'Header' },
  query: { title: 'Query', addLabel: 'Add parameter', nameLabel: 'Parameter' },
} as const;

function Rows({
  title,
  addLabel,
  nameLabel,
  rows,
  onChange,
  context,
  autoName,
}: {
  title: string;
  addLabel: string;
  nameLabel: string;
  rows: Row[];
  onChange: (rows: Row[]) => void;
  context: StepContext;
  /** Fill an empty name from the picked field. */
  autoName?: boolean;
}) {
  const id = useId();
  const set = (key: string, patch: Partial<Row>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <fieldset className="rows">
      <legend className="label">{title}</legend>
      {rows.map((r, i) => (
        <div key={r.key} className="kv-row">
          <div className="field kv-name">
            <label htmlFor={`${id}-${r.key}`} className="label small">
              {nameLabel} {rows.length > 1 ? i + 1 : ''}
            </label>
            <input
              id={`${id}-${r.key}`}
              className="input mono"
              value={r.name}
              onChange={(e) => set(r.key, { name: e.target.value })}
            />
          </div>
          <div className="kv-value">
            <ExpressionInput
              label={`Value${r.name ? ` of ${r.name}` : rows.length > 1 ? ` ${i + 1}` : ''}`}
              value={r.value}
              onChange={(value, picked) =>
                set(
                  r.key,
                  autoName && picked && !r.name.trim()
                    ? { value, name: suggestName(picked.label) }
                    : { value },
                )
              }
              fields={context.fields}
              scope={context.scope}
            />
          </div>
          <button
            type="button"
            className="button small icon kv-remove"
            aria-label={`Remove ${r.name || `${nameLabel.toLowerCase()} ${i + 1}`}`}
            onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
          >
            ✕
          </button>
        </div>
      ))}
      <button type="button" className="button small" onClick={() => onChange([...rows, row()])}>
        + {addLabel}
      </button>
    </fieldset>
  );
}
