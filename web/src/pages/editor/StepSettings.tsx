import { useId } from 'react';
import type { FieldProblem } from '../../api';
import { STEP_TYPES, type RawDraft, type StepDraft } from '../../lib/draft';
import type { SimResult } from '../../lib/simulate';
import { failedNow } from '../../lib/testRun';
import type { ResponseMode } from '../../types';
import { StepRunResult } from './StepRunResult';
import { catalogLists } from '../../../../src/shared/step-catalog';
import { viewFor } from './steps';
import { type Props, problemAt, type RenderList, type StepContext } from './steps/shared';

export type { StepContext };

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
  const view = viewFor(step);
  // A nested step's problems show in its own card (its lists: step-catalog.ts); a field the form
  // shows its problems at, there (`*`: any index, a switch case's `cases/*/when`).
  const shown = ['name', ...(view?.inline ?? []), ...(catalogLists(step.type) ?? []).map((l) => `${l}/*`)];
  const inPlace = new RegExp(
    `^${escapeRegExp(at)}/(?:${shown.map((f) => escapeRegExp(f).replace(/\\\*/g, '\\d+')).join('|')})(?:/|$)`,
  );
  const elsewhere = problems.filter((p) => !inPlace.test(p.field));
  const renderList: RenderList = (steps, _listAt, title) => (
    <p className="small muted lane-note">
      {steps.length === 0 ? 'No steps' : steps.length === 1 ? '1 step' : `${steps.length} steps`} in {title}:
      add, move and edit them in the flow.
    </p>
  );
  /** What every step type's own form component takes. */
  const typeForm: Props = { step, at, label, onChange, context, problems, result, renderList, responseMode };

  return (
    <div className={`step step-settings${failedNow(result?.lastRun) ? ' step-failed' : ''}`}>
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

      {view ? (
        <view.Form {...typeForm} />
      ) : (
        <div className="field">
          <label htmlFor={`${id}-raw`} className="label">
            Configuration (JSON)
          </label>
          <textarea
            id={`${id}-raw`}
            className="input mono"
            rows={6}
            value={(step as RawDraft).raw}
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

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function describeField(field: string, at: string): string {
  const rest = field.slice(at.length).replace(/^\//, '');
  return rest ? `${rest.replace(/\//g, ' › ')}:` : 'This step';
}
