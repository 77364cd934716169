import { useEffect, useId, useState } from 'react';
import { type ApiError, api, asApiError } from '../api';
import { ErrorMessage } from '../components/ErrorMessage';
import { RequestTabs } from '../components/RequestTabs';
import { ModeBadge, StatusBadge } from '../components/StatusBadge';
import { formatDuration, formatTime } from '../lib/format';
import { useTitle } from '../lib/title';
import { Link, navigate } from '../router';
import { NotRunStep, notRunReason, useNotRunSteps } from './execution/NotRunSteps';
import { ErrorBox, StepRecord, useVersionSteps } from './execution/StepRecord';
import { WaitingFor } from './execution/WaitingFor';
import type { Execution, TriggerItem, Workflow } from '../types';
import { useCan } from '../lib/role';

const FINISHED = new Set(['succeeded', 'failed', 'filtered', 'skipped']);

/** An error execution's trigger item names the failed execution (SPEC 7c): `execution.id`. */
function failedExecution(e: Execution): { id?: unknown; workflowName?: unknown } | undefined {
  const x = (e.trigger as { execution?: unknown }).execution;
  return typeof x === 'object' && x !== null ? (x as { id?: unknown; workflowName?: unknown }) : undefined;
}
const failedId = (e: Execution): string | undefined => {
  const id = failedExecution(e)?.id;
  return typeof id === 'string' ? id : undefined;
};
const failedWorkflowName = (e: Execution): string | undefined => {
  const name = failedExecution(e)?.workflowName;
  return typeof name === 'string' ? name : undefined;
};

/** One execution: its state and timings, the trigger item, and each step's input, output and error. */
export function ExecutionDetail({ id }: { id: string }) {
  const canRun = useCan('editor');
  const headingId = useId();
  const [execution, setExecution] = useState<Execution | null>(null);
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [triggerTab, setTriggerTab] = useState('table');
  useTitle(execution ? `Execution ${execution.status}` : 'Execution', workflow?.name);
  const notRun = useNotRunSteps(execution);
  const definitions = useVersionSteps(execution);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let cancelled = false;
    const load = async () => {
      try {
        const e = await api<Execution>('GET', `/executions/${encodeURIComponent(id)}`);
        if (cancelled) return;
        setExecution(e);
        // Follow a run that has not finished yet.
        // (A waiting one changes only when it resumes: looked at less often, and at its time.)
        if (!FINISHED.has(e.status))
          timer = setTimeout(
            load,
            e.status === 'waiting' && e.resumeAt && !e.waitingFor
              ? Math.min(Math.max(Date.parse(e.resumeAt) - Date.now(), 1000), 10_000)
              : 1000,
          );
      } catch (err) {
        if (!cancelled) setError(asApiError(err));
      }
    };
    load();
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [id]);

  const workflowId = execution?.workflowId;
  useEffect(() => {
    if (!workflowId) return;
    api<Workflow>('GET', `/workflows/${encodeURIComponent(workflowId)}`).then(setWorkflow, () =>
      setWorkflow(null),
    );
  }, [workflowId]);

  const [testMade, setTestMade] = useState<string | null>(null);
  /** A test from this execution (SPEC 7g): its request, its effects' recordings, its outputs as expected. */
  const makeTest = async () => {
    setBusy(true);
    setActionError(null);
    try {
      const name = `${workflow?.name ?? 'Execution'} · ${formatTime(execution?.createdAt ?? '')}`;
      await api('POST', `/workflows/${encodeURIComponent(execution!.workflowId)}/tests`, {
        name,
        fromExecutionId: id,
      });
      setTestMade(name);
    } catch (err) {
      setActionError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  const again = async (action: 'retry' | 'replay') => {
    setBusy(true);
    setActionError(null);
    try {
      // Replay from here runs what production runs (SPEC 8 target "published"); the editor's
      // replay runs the draft.
      const { executionId } = await api<{ executionId: string }>(
        'POST',
        `/executions/${encodeURIComponent(id)}/${action}`,
        action === 'replay' ? { target: 'published' } : undefined,
      );
      navigate(`/executions/${executionId}`);
    } catch (err) {
      setActionError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  if (error) {
    return (
      <div className="card">
        <h1>Execution</h1>
        <ErrorMessage error={error} />
        <Link to="/executions">All executions</Link>
      </div>
    );
  }
  if (!execution) return <p className="muted">Loading the execution…</p>;
  const e = execution;

  return (
    <article aria-labelledby={headingId} className="execution">
      <Link
        to={`/executions?workflowId=${encodeURIComponent(e.workflowId)}`}
        className="small muted back-link"
      >
        ← Executions of this workflow
      </Link>
      <div className="page-head">
        <h1 id={headingId}>
          Execution <StatusBadge status={e.status} /> <ModeBadge mode={e.mode} />
        </h1>
        {canRun && (
          <div className="page-actions">
            <button
              type="button"
              className="button"
              onClick={() => again('retry')}
              disabled={busy || !FINISHED.has(e.status)}
              title="Run the same request through the same workflow version again"
            >
              Retry
            </button>
            <button
              type="button"
              className="button primary"
              onClick={() => again('replay')}
              disabled={busy || workflow?.publishedVersion === null}
              title={
                workflow?.publishedVersion === null
                  ? 'The workflow was never published: replay it into the draft from the editor'
                  : `Run the same request through the version live traffic runs${workflow ? ` (v${workflow.publishedVersion})` : ''}`
              }
            >
              Replay into published version
            </button>
            <button
              type="button"
              className="button"
              onClick={makeTest}
              disabled={busy || !FINISHED.has(e.status)}
              title="Keep this request and what each step gave as a test: later changes are checked against it, without calling anything"
            >
              Make a test
            </button>
          </div>
        )}
      </div>
      <ErrorMessage error={actionError} />
      {testMade && (
        <p className="notice small" role="status">
          Test “{testMade}” made: run it from the workflow's{' '}
          <Link to={`/workflows/${encodeURIComponent(e.workflowId)}`}>Settings tab</Link>, and Publish runs it
          against the draft.
        </p>
      )}
      {workflow?.publishedVersion === null && (
        <p className="small muted">
          This workflow was never published, so there is no published version to replay into: replay the
          request into the draft from the <Link to={`/workflows/${e.workflowId}`}>editor</Link>.
        </p>
      )}
      {e.status === 'skipped' && (
        <p className="notice small" role="status" data-testid="skip-note">
          Skipped: superseded. An execution of the same concurrency key
          {e.concurrencyKey ? (
            <>
              {' '}
              (<code>{e.concurrencyKey}</code>)
            </>
          ) : null}{' '}
          with a newer value of the workflow's <em>newest wins</em> setting had already started, so this older
          event ran no step: it can never overwrite the newer one.
        </p>
      )}
      {e.status === 'waiting' ? (
        <p className="notice small waiting-note" role="status" data-testid="waiting-note">
          {e.waitingFor
            ? 'This execution is waiting: it holds no worker, and resumes on any executor when what it waits for (below) comes. The page follows it.'
            : `This execution is waiting${e.resumeAt ? ` until ${formatTime(e.resumeAt)}` : ''}: it holds no worker and resumes then, on any executor. The page follows it.`}
        </p>
      ) : (
        !FINISHED.has(e.status) && (
          <p className="notice small" role="status">
            This execution is {e.status}; the page follows it.
          </p>
        )
      )}
      {e.status === 'waiting' && e.waitingFor && <WaitingFor waiting={e.waitingFor} />}
      <dl className="facts">
        <div>
          <dt>Workflow</dt>
          <dd>
            <Link to={`/workflows/${e.workflowId}`}>{workflow?.name ?? e.workflowId}</Link> · version{' '}
            {e.workflowVersion}
            {workflow && workflow.version !== e.workflowVersion && (
              <span className="muted small"> (current: {workflow.version})</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatTime(e.startedAt ?? e.createdAt)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(e.startedAt, e.finishedAt)}</dd>
        </div>
        <div>
          <dt>Attempt</dt>
          <dd>
            {e.attempt}
            {e.retryOf && (
              <>
                {' '}
                · retry of{' '}
                <Link to={`/executions/${e.retryOf}`} data-testid="retry-of">
                  an earlier execution
                </Link>
              </>
            )}
            {e.retries && e.retries.length > 0 && (
              <>
                {' '}
                · retried as{' '}
                {e.retries.map((r, i) => (
                  <span key={r}>
                    {i > 0 && ', '}
                    <Link to={`/executions/${r}`} data-testid="retried-as">
                      retry {i + 1}
                    </Link>
                  </span>
                ))}
              </>
            )}
          </dd>
        </div>
        {e.concurrencyKey && (
          <div>
            <dt>Concurrency key</dt>
            <dd>
              <code className="small" data-testid="concurrency-key">
                {e.concurrencyKey}
              </code>
            </dd>
          </div>
        )}
        {e.parentExecutionId && (
          <div>
            <dt>Called by</dt>
            <dd>
              A <code>workflow</code> step of{' '}
              <Link to={`/executions/${e.parentExecutionId}`} data-testid="parent-execution">
                execution {e.parentExecutionId.slice(0, 8)}…
              </Link>
            </dd>
          </div>
        )}
        {e.errorExecutionId && (
          <div>
            <dt>Error workflow</dt>
            <dd>
              This failure started{' '}
              <Link to={`/executions/${e.errorExecutionId}`}>an error workflow execution</Link>
            </dd>
          </div>
        )}
        {e.mode === 'error' && failedId(e) && (
          <div>
            <dt>Started by</dt>
            <dd>
              The failure of{' '}
              <Link to={`/executions/${failedId(e)}`}>execution {failedId(e)!.slice(0, 8)}…</Link>
              {failedWorkflowName(e) ? ` (${failedWorkflowName(e)})` : ''}
            </dd>
          </div>
        )}
        <div>
          <dt>Id</dt>
          <dd>
            <code className="small">{e.id}</code>
          </dd>
        </div>
      </dl>
      {e.error && (
        <section aria-label="Error of the execution">
          <h2>Error{e.error.step ? ` in step ${e.error.step}` : ''}</h2>
          <ErrorBox error={e.error} />
        </section>
      )}

      <section className="card" aria-labelledby={`${headingId}-trigger`}>
        <h2 id={`${headingId}-trigger`}>
          Trigger item <span className="muted small">{triggerLine(e.trigger)}</span>
        </h2>
        <RequestTabs item={e.trigger} label="Trigger item" selected={triggerTab} onSelect={setTriggerTab} />
      </section>

      <section className="card" aria-labelledby={`${headingId}-steps`}>
        <h2 id={`${headingId}-steps`}>Steps</h2>
        {e.steps.length === 0 && notRun.length === 0 ? (
          <p className="muted">
            {FINISHED.has(e.status)
              ? 'This workflow version has no steps (or none ran).'
              : 'No step has run yet.'}
          </p>
        ) : (
          <ol className="steps">
            {e.steps.map((s, i) => (
              <StepRecord key={s.name} step={s} index={i} definitions={definitions} />
            ))}
            {notRun.map((s, i) => (
              <NotRunStep key={s.name} step={s} index={e.steps.length + i} reason={notRunReason(e)} />
            ))}
          </ol>
        )}
      </section>
    </article>
  );
}

/** Where the item came from, in a line: a request, a schedule's tick (SPEC 7f), or nothing to say (Run now, a caller's input). */
function triggerLine(item: TriggerItem): string {
  if (typeof item.scheduledAt === 'string')
    return `scheduled for ${formatTime(item.scheduledAt)} · started ${formatTime(String(item.firedAt ?? ''))}`;
  if (item.method) return `${item.method} /${item.path ?? ''} · received ${formatTime(item.receivedAt)}`;
  return '';
}
