/**
 * One step's record in an execution, at any depth (SPEC 7b): its status, timings, error, input and
 * output; for `if`/`switch` the branch that ran and those that did not, with the records of the
 * steps inside; for `forEach` each recorded iteration (the first 100) with its steps; for `code` its
 * console lines; for `http` the request it sent and its attempts; for `sql` its rows as a table; for `email` its recipients,
 * accepted and refused.
 */
import { useEffect, useId, useState } from 'react';
import { api } from '../../api';
import { JsonView } from '../../components/JsonView';
import { StatusBadge } from '../../components/StatusBadge';
import { Tabs } from '../../components/Tabs';
import { formatDuration, formatTime } from '../../lib/format';
import { Link } from '../../router';
import { EmailRecord } from './EmailRecord';
import type { Execution, ExecutionError, ExecutionStep, Step } from '../../types';
import { SentRequest } from './SentRequest';
import { SqlRows, sqlOutput } from './SqlRows';

export function ErrorBox({ error }: { error: ExecutionError }) {
  return (
    <div className="error" role="note">
      <p className="error-message">{error.message}</p>
      {(error.field || error.expression) && (
        <p className="small">
          {error.field && (
            <>
              Field <code>{error.field}</code>
            </>
          )}
          {error.expression && (
            <>
              {error.field ? ', expression ' : 'Expression '}
              {/* As written, spaces included: the position counts from the first character after {{. */}
              <code className="pre-spaces">{`{{${error.expression}}}`}</code>
            </>
          )}
          {error.position !== undefined && ` at position ${error.position}`}
        </p>
      )}
    </div>
  );
}

/** The steps of the workflow version an execution ran (to name the branches that did not run), by name. */
export function useVersionSteps(execution: Execution | null): Map<string, Step> {
  const [steps, setSteps] = useState<Map<string, Step>>(new Map());
  const workflowId = execution?.workflowId;
  const version = execution?.workflowVersion;
  useEffect(() => {
    if (!workflowId || !version) return;
    let cancelled = false;
    api<{ steps: Step[] }>(
      'GET',
      `/workflows/${encodeURIComponent(workflowId)}/versions/${encodeURIComponent(String(version))}`,
    ).then(
      (v) => {
        if (cancelled) return;
        const byName = new Map<string, Step>();
        const walk = (list: unknown) => {
          if (!Array.isArray(list)) return;
          for (const s of list as Step[]) {
            byName.set(s.name, s);
            walk(s.then);
            walk(s.else);
            walk(s.default);
            walk(s.steps);
            if (Array.isArray(s.cases)) for (const c of s.cases) walk((c as { steps?: unknown }).steps);
          }
        };
        walk(v.steps);
        setSteps(byName);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [workflowId, version]);
  return steps;
}

/** A switch case as words: `equals "push"` or `when {{ … }}`. */
function caseLabel(c: unknown, i: number): string {
  const k = (c ?? {}) as { equals?: unknown; when?: unknown };
  const what =
    'when' in k ? `when ${String(k.when)}` : 'equals' in k ? `equals ${JSON.stringify(k.equals)}` : '';
  return `Case ${i + 1}${what ? ` (${what})` : ''}`;
}

export function branchLabel(step: ExecutionStep, definition: Step | undefined): string {
  const b = step.branch;
  if (b === 'then') return 'Then (the condition was true)';
  if (b === 'else') return 'Else (the condition was false)';
  if (b === 'default') return 'Default (no case matched)';
  if (typeof b === 'number')
    return caseLabel(Array.isArray(definition?.cases) ? definition.cases[b] : undefined, b);
  return '';
}

/** The branches of an if/switch that did not run, as words. */
function otherBranches(step: ExecutionStep, definition: Step | undefined): string[] {
  if (!definition) return [];
  const out: string[] = [];
  if (step.type === 'if') {
    if (step.branch !== 'then') out.push('Then');
    if (step.branch !== 'else' && Array.isArray(definition.else)) out.push('Else');
  } else if (step.type === 'switch') {
    const cases = Array.isArray(definition.cases) ? definition.cases : [];
    cases.forEach((c, i) => {
      if (step.branch !== i) out.push(caseLabel(c, i));
    });
    if (step.branch !== 'default' && Array.isArray(definition.default)) out.push('Default');
  }
  return out;
}

export function StepRecord({
  step,
  index,
  definitions,
}: {
  step: ExecutionStep;
  index: number;
  definitions: Map<string, Step>;
}) {
  const id = useId();
  const rows = step.type === 'sql' ? sqlOutput(step.output) : undefined;
  const [tab, setTab] = useState(rows ? 'rows' : 'output');
  const definition = definitions.get(step.name);
  const holds = step.type === 'if' || step.type === 'switch';
  const skipped = holds ? otherBranches(step, definition) : [];
  const iterations = step.iterations ?? [];
  const count = step.iterationCount ?? iterations.length;
  return (
    <li
      className={`step exec-step${step.status === 'failed' ? ' step-failed' : ''}`}
      aria-labelledby={`${id}-title`}
    >
      <div className="step-head">
        <span className="step-number" aria-hidden="true">
          {index + 1}
        </span>
        <h3 id={`${id}-title`} className="step-title">
          <span className="visually-hidden">Step {index + 1}: </span>
          {step.name} <span className="muted small">({step.type})</span>
        </h3>
        <StatusBadge status={step.status} />
        <span className="muted small step-time">
          {formatDuration(step.startedAt, step.finishedAt)} · started {formatTime(step.startedAt)}
        </span>
      </div>
      {step.error && <ErrorBox error={step.error} />}

      {holds && (
        <div className="branch-summary" data-testid="branch-taken">
          {step.branch === undefined ? (
            <p className="small">
              <strong>No branch ran</strong>
              {step.type === 'switch'
                ? ': no case matched and there is no default, so '
                : ': the condition was false and there is no else, so '}
              the step passed its input on.
            </p>
          ) : (
            <p className="small">
              Branch taken: <strong>{branchLabel(step, definition)}</strong>
            </p>
          )}
          {skipped.length > 0 && <p className="small muted">Not run: {skipped.join(' · ')}</p>}
        </div>
      )}
      {holds && step.steps && step.steps.length > 0 && (
        <ol className="steps exec-nested" aria-label={`Steps run inside ${step.name}`}>
          {step.steps.map((s, i) => (
            <StepRecord key={s.name} step={s} index={i} definitions={definitions} />
          ))}
        </ol>
      )}
      {holds &&
        step.status === 'succeeded' &&
        step.branch !== undefined &&
        (step.steps?.length ?? 0) === 0 && (
          <p className="small muted">The branch has no steps: its input went on unchanged.</p>
        )}

      {step.type === 'forEach' && (
        <div className="loop-summary">
          <p className="small">
            <strong>
              {count} iteration{count === 1 ? '' : 's'}
            </strong>
            {count > iterations.length && ` · the first ${iterations.length} are shown`}
          </p>
          {iterations.length > 0 && (
            <ol className="iterations" aria-label={`Iterations of ${step.name}`}>
              {iterations.map((it) => (
                <li key={it.index}>
                  <details className="iteration" open={iterations.length <= 3 || it.status === 'failed'}>
                    <summary>
                      Element {it.index + 1} <StatusBadge status={it.status} />
                    </summary>
                    {it.steps.length === 0 ? (
                      <p className="small muted">No step ran.</p>
                    ) : (
                      <ol className="steps exec-nested">
                        {it.steps.map((s, i) => (
                          <StepRecord key={s.name} step={s} index={i} definitions={definitions} />
                        ))}
                      </ol>
                    )}
                  </details>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}

      {step.type === 'code' && (
        <div className="field">
          <p className="label small" id={`${id}-logs`}>
            Console output{step.logs && step.logs.length >= 100 ? ' (the first 100 lines)' : ''}
          </p>
          {step.logs && step.logs.length > 0 ? (
            <pre className="code-logs" role="log" aria-labelledby={`${id}-logs`}>
              {step.logs.join('\n')}
            </pre>
          ) : (
            <p className="small muted">Nothing was logged.</p>
          )}
        </div>
      )}

      {step.type === 'email' && <EmailRecord step={step} />}

      {step.childExecutionId && (
        <p className="small">
          Sub-workflow:{' '}
          <Link to={`/executions/${step.childExecutionId}`} data-testid="child-execution">
            execution {step.childExecutionId.slice(0, 8)}…
          </Link>
        </p>
      )}

      {step.attempts && step.attempts.length > 1 && (
        <div className="field">
          <p className="label small">Attempts</p>
          <ol className="small attempts">
            {step.attempts.map((a) => (
              <li key={a.at}>
                {formatTime(a.at)} ·{' '}
                {a.status !== undefined
                  ? `${step.type === 'email' ? 'SMTP' : 'HTTP'} ${a.status}`
                  : (a.error ?? '')}
              </li>
            ))}
          </ol>
        </div>
      )}

      <Tabs
        label={`Data of step ${step.name}`}
        selected={tab}
        onSelect={setTab}
        tabs={[
          ...(rows
            ? [{ id: 'rows', label: 'Rows', content: <SqlRows output={rows} name={step.name} /> }]
            : []),
          {
            id: 'output',
            label: step.request ? 'Response' : 'Output',
            content: <JsonView value={step.output} label={`Output of ${step.name}`} />,
          },
          ...(step.request
            ? [
                {
                  id: 'request',
                  label: 'Request',
                  content: <SentRequest request={step.request} name={step.name} />,
                },
              ]
            : []),
          {
            id: 'input',
            label: 'Input',
            content: <JsonView value={step.input} label={`Input of ${step.name}`} />,
          },
        ]}
      />
    </li>
  );
}
