import { useId, useState } from 'react';
import { short } from '../lib/format';
import {
  type DiffInput,
  diffSummary,
  diffVersions,
  type FieldChange,
  isSame,
  type StepChange,
  type StepPlace,
} from '../lib/versionDiff';
import { JsonView } from './JsonView';

/**
 * Two versions of a workflow compared (lib/versionDiff.ts): steps added, removed and moved, and
 * each changed field with its old value struck out beside the new one; the raw JSON of both, side
 * by side, one click away.
 */
export function VersionDiffView({
  before,
  after,
  beforeLabel,
  afterLabel,
}: {
  before: DiffInput;
  after: DiffInput;
  beforeLabel: string;
  afterLabel: string;
}) {
  const id = useId();
  const [raw, setRaw] = useState(false);
  const diff = diffVersions(before, after);
  const summary = diffSummary(diff);
  return (
    <div className="diff" data-testid="version-diff">
      <div className="diff-head">
        <p className="small" data-testid="version-changes">
          {isSame(diff) ? (
            'The two versions have the same content.'
          ) : (
            <>
              {beforeLabel} → {afterLabel}: <strong>{summary.join(', ')}</strong>.
            </>
          )}
        </p>
        <button
          type="button"
          className="button small"
          aria-pressed={raw}
          aria-controls={`${id}-body`}
          onClick={() => setRaw(!raw)}
        >
          {raw ? 'Show the changes' : 'Show the raw JSON'}
        </button>
      </div>
      <div id={`${id}-body`}>
        {raw ? (
          <div className="version-diff">
            <JsonView value={before} label={beforeLabel} />
            <JsonView value={after} label={afterLabel} />
          </div>
        ) : (
          !isSame(diff) && (
            <>
              {(diff.name || diff.trigger.length > 0) && (
                <DiffSection
                  title="Trigger and name"
                  fields={[...(diff.name ? [diff.name] : []), ...diff.trigger]}
                />
              )}
              {diff.settings.length > 0 && <DiffSection title="Settings" fields={diff.settings} />}
              {diff.steps.length > 0 && (
                <section className="diff-section">
                  <h3 className="diff-title">Steps</h3>
                  <ul className="diff-steps">
                    {diff.steps.map((s) => (
                      <StepDiff key={`${s.kind}:${s.name}`} change={s} />
                    ))}
                  </ul>
                </section>
              )}
            </>
          )
        )}
      </div>
    </div>
  );
}

function DiffSection({ title, fields }: { title: string; fields: FieldChange[] }) {
  return (
    <section className="diff-section">
      <h3 className="diff-title">{title}</h3>
      <FieldList fields={fields} />
    </section>
  );
}

const KIND: Record<StepChange['kind'], string> = { added: 'Added', removed: 'Removed', kept: 'Changed' };

const where = (p: StepPlace) =>
  `step ${p.position} ${p.list === 'top level' ? 'at the top level' : `in ${p.list}`}`;

function StepDiff({ change }: { change: StepChange }) {
  const badge = change.kind === 'kept' && change.fields.length === 0 ? 'Moved' : KIND[change.kind];
  return (
    <li className={`diff-step diff-step-${change.kind}`} data-testid={`diff-step-${change.name}`}>
      <p className="diff-step-head">
        <span className={`badge diff-badge-${badge.toLowerCase()}`}>{badge}</span>{' '}
        <strong>{change.name}</strong> <span className="muted small">({change.type})</span>{' '}
        <span className="muted small">
          {change.moved
            ? `moved from ${where(change.moved.from)} to ${where(change.moved.to)}`
            : where(change.place)}
        </span>
      </p>
      {change.fields.length > 0 && <FieldList fields={change.fields} />}
      {change.config && (
        <p className="small muted diff-config">
          <code>{short(stripNameType(change.config), 200)}</code>
        </p>
      )}
    </li>
  );
}

function stripNameType(config: Record<string, unknown>): Record<string, unknown> {
  const { name: _n, type: _t, ...rest } = config;
  return rest;
}

function FieldList({ fields }: { fields: FieldChange[] }) {
  return (
    <dl className="diff-fields">
      {fields.map((f) => (
        <div key={f.path} className="diff-field">
          <dt>
            <code>{f.path || '(value)'}</code>
          </dt>
          <dd>
            {f.kind !== 'added' && (
              <del className="diff-old">
                <span className="visually-hidden">was </span>
                {short(f.before, 500)}
              </del>
            )}
            {f.kind === 'changed' && (
              <span aria-hidden="true" className="diff-arrow">
                {' → '}
              </span>
            )}
            {f.kind !== 'removed' && (
              <ins className="diff-new">
                <span className="visually-hidden">now </span>
                {short(f.after, 500)}
              </ins>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}
