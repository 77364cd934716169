import { type KeyboardEvent, useId, useState } from 'react';
import type { FieldProblem } from '../../api';
import { newStep, STEP_TYPES, type StepDraft } from '../../lib/draft';
import { lanesOf } from '../../lib/lanes';
import { formFor } from '../../lib/steps';
import type { SimResult } from '../../lib/simulate';
import { type StepRun, failedNow } from '../../lib/testRun';
import { runStatusText, StepRunResult } from './StepRunResult';
import { useCan } from '../../lib/role';

/** What the step does, in one line. */
export function stepSummary(step: StepDraft): string {
  return formFor(step.type)?.summary(step) ?? 'Configuration as JSON';
}

const RUN_KIND: Record<StepRun['status'], string> = {
  succeeded: 'ok',
  failed: 'bad',
  filtered: 'muted',
  waiting: 'muted',
  notRun: 'muted',
  pending: 'muted',
};

/**
 * The status of the step in the last test run (marked stale when that run is of another version
 * than the one on screen), or of its preview on the event on screen.
 */
function statusOf(result: SimResult | undefined): { text: string; kind: string } | undefined {
  if (!result) return undefined;
  const run = result.lastRun;
  if (run?.stale) return { text: `${runStatusText(run)} · ${run.stale}`, kind: 'stale' };
  if (run) return { text: runStatusText(run), kind: RUN_KIND[run.status] };
  if (result.error) return { text: 'Fails on the event on screen', kind: 'bad' };
  if (result.notTaken) return { text: 'Branch not taken', kind: 'muted' };
  return { text: 'OK on the event on screen', kind: 'ok' };
}

export interface FlowProps {
  /** The dry run's result of each step, by JSON pointer. */
  results: Record<string, SimResult> | undefined;
  problems: FieldProblem[];
  /** Every step name in the workflow, so a new step gets a name no other step has. */
  names: () => Set<string>;
  /** The key of the selected step. */
  selected: string | undefined;
  /** The id of the panel a selected card's settings are in, when shown. */
  controls: string | undefined;
  onSelect: (key: string) => void;
  /** One list (found by identity: the top level or a nested one) becomes `next`. */
  onList: (list: StepDraft[], next: StepDraft[]) => void;
  /** A step was added: it is selected. */
  onAdded: (key: string) => void;
  /** Delete on a card: asks, then removes. */
  onDelete: (key: string) => void;
}

/** Focuses a step's card once it is on screen. */
export function focusCard(key: string) {
  requestAnimationFrame(() =>
    document.querySelector<HTMLElement>(`[data-step-key="${CSS.escape(key)}"]`)?.focus(),
  );
}

/**
 * The steps of the workflow as a vertical flow of compact cards (type, name, a one-line summary,
 * the last test run's status); a branch or loop's lists as nested lanes with their labels. A card's
 * settings open in the side panel or sheet.
 */
export function StepFlow({ steps, ...props }: FlowProps & { steps: StepDraft[] }) {
  return (
    <section className="card step-flow" aria-labelledby="flow-steps-title">
      <h2 id="flow-steps-title" tabIndex={-1}>
        Steps
      </h2>
      <details className="help steps-help">
        <summary>Steps run in order after the trigger</summary>
        Each receives the previous output as <code>$</code>. Values may hold{' '}
        <code>{'{{ expressions }}'}</code> (JSONata): <code>$trigger</code> is the request,{' '}
        <code>$steps.name</code> an earlier step's output. Choose a card to edit its step; on a card, Alt+↑/↓
        moves it and Delete removes it.
      </details>
      {steps.length === 0 && <p className="muted">No steps: the trigger item is the result of each run.</p>}
      <FlowList steps={steps} at="/steps" {...props} />
    </section>
  );
}

function FlowList({
  steps,
  at,
  place,
  ...props
}: FlowProps & {
  steps: StepDraft[];
  /** JSON pointer of the list. */
  at: string;
  /** A nested list's name (“case 1 of route”); undefined at the top level. */
  place?: string;
}) {
  const id = useId();
  const canEdit = useCan('editor');
  const [adding, setAdding] = useState(STEP_TYPES[0]!.type);
  const add = (type: string, index = steps.length) => {
    const step = newStep(type, props.names());
    props.onList(steps, [...steps.slice(0, index), step, ...steps.slice(index)]);
    props.onAdded(step.key);
  };
  const move = (index: number, by: number) => {
    const to = index + by;
    if (to < 0 || to >= steps.length) return;
    const next = [...steps];
    const [step] = next.splice(index, 1);
    next.splice(to, 0, step!);
    props.onList(steps, next);
    focusCard(step!.key);
  };
  return (
    <>
      {steps.length > 0 && (
        <ol
          className={place ? 'flow-steps nested-steps' : 'flow-steps'}
          aria-label={place ? `Steps of ${place}` : 'Steps'}
        >
          {steps.map((step, index) => (
            <FlowCard
              key={step.key}
              step={step}
              at={`${at}/${index}`}
              index={index}
              place={place}
              onMove={(by) => move(index, by)}
              onInsert={(type) => add(type, index + 1)}
              {...props}
            />
          ))}
        </ol>
      )}
      {!canEdit ? null : place ? (
        <div className="add-nested">
          <label htmlFor={`${id}-add`} className="label small">
            Add a step to {place}
          </label>
          <div className="add-nested-row">
            <select
              id={`${id}-add`}
              className="input"
              value={adding}
              onChange={(e) => setAdding(e.target.value)}
            >
              {STEP_TYPES.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.label}
                </option>
              ))}
            </select>
            <button
              type="button"
              className="button small"
              onClick={() => add(adding)}
              aria-label={`Add the step to ${place}`}
            >
              + Add
            </button>
          </div>
        </div>
      ) : (
        <fieldset className="add-step">
          <legend className="label">Add a step</legend>
          <div className="add-step-buttons">
            {STEP_TYPES.map((t) => (
              <button
                key={t.type}
                type="button"
                className="button"
                title={t.description}
                onClick={() => add(t.type)}
              >
                + {t.label}
              </button>
            ))}
          </div>
        </fieldset>
      )}
    </>
  );
}

function FlowCard({
  step,
  at,
  index,
  place,
  onMove,
  onInsert,
  ...props
}: FlowProps & {
  step: StepDraft;
  at: string;
  index: number;
  place: string | undefined;
  onMove: (by: number) => void;
  /** Adds a step of this type right after this one. */
  onInsert: (type: string) => void;
}) {
  const id = useId();
  const canEdit = useCan('editor');
  const [inserting, setInserting] = useState(false);
  const result = props.results?.[at];
  const selected = props.selected === step.key;
  const label = step.name || `step ${index + 1}`;
  const form = formFor(step.type);
  const typeLabel = form?.label ?? step.type;
  const invalid = props.problems.some((p) => p.field === at || p.field.startsWith(`${at}/`));
  const status = statusOf(result);
  const onKeyDown = (e: KeyboardEvent<HTMLButtonElement>) => {
    if (!canEdit) return;
    if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
      e.preventDefault();
      onMove(e.key === 'ArrowUp' ? -1 : 1);
    } else if ((e.key === 'Delete' || e.key === 'Backspace') && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      props.onDelete(step.key);
    }
  };
  return (
    <li
      className={`step flow-step${failedNow(result?.lastRun) ? ' step-failed' : ''}`}
      data-testid="step-card"
      data-run-status={result?.lastRun ? (result.lastRun.stale ? 'stale' : result.lastRun.status) : undefined}
    >
      <button
        type="button"
        className={`flow-card-button step-card-button${selected ? ' selected' : ''}${invalid ? ' invalid' : ''}`}
        data-step-key={step.key}
        aria-expanded={props.controls ? selected : undefined}
        aria-controls={selected ? props.controls : undefined}
        aria-keyshortcuts="Alt+ArrowUp Alt+ArrowDown Delete"
        onClick={() => props.onSelect(step.key)}
        onKeyDown={onKeyDown}
      >
        <span className="flow-card-kind">
          <span className="step-icon" aria-hidden="true">
            {form?.icon ?? '•'}
          </span>{' '}
          <span className="visually-hidden">
            Step {index + 1}
            {place ? ` of ${place}` : ''}:{' '}
          </span>
          {typeLabel}
        </span>
        <span className="flow-card-title mono">{label}</span>
        <span className="flow-card-detail small muted">{stepSummary(step)}</span>
        {invalid && <span className="flow-card-problem small">Some fields need fixing</span>}
        {status && <span className={`step-status small status-${status.kind}`}>{status.text}</span>}
      </button>
      <StepRunResult lastRun={result?.lastRun} />
      {lanesOf(step, label).map((lane) => (
        <section
          key={lane.suffix}
          className={`lane${lanesTaken(result, lane.suffix) === false ? ' branch-idle' : ''}`}
          aria-label={lane.place}
        >
          <h3 className="lane-title small">{lane.title}</h3>
          <FlowList steps={lane.steps} at={`${at}/${lane.suffix}`} place={lane.place} {...props} />
        </section>
      ))}
      {canEdit && (
        <div className="add-after">
          <button
            type="button"
            className="button small add-after-button"
            aria-expanded={inserting}
            aria-controls={inserting ? `${id}-types` : undefined}
            aria-label={`Add step after ${label}`}
            onClick={() => setInserting(!inserting)}
            onKeyDown={(e) => {
              if (e.key === 'Escape' && inserting) {
                e.preventDefault();
                setInserting(false);
              }
            }}
          >
            + Add step
          </button>
          {inserting && (
            <fieldset
              id={`${id}-types`}
              className="add-after-types"
              aria-label={`Step types to add after ${label}`}
            >
              {STEP_TYPES.map((t) => (
                <button
                  key={t.type}
                  type="button"
                  className="button small"
                  title={t.description}
                  onClick={() => {
                    setInserting(false);
                    onInsert(t.type);
                  }}
                >
                  {t.label}
                </button>
              ))}
            </fieldset>
          )}
        </div>
      )}
    </li>
  );
}

/** Whether the event on screen takes this lane of an `if`/`switch` (undefined: unknown or a loop). */
function lanesTaken(result: SimResult | undefined, suffix: string): boolean | undefined {
  if (result?.branch === undefined) return undefined;
  const m = /^cases\/(\d+)\/steps$/.exec(suffix);
  return result.branch === (m ? Number(m[1]) : suffix);
}
