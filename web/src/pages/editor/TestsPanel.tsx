import { useCallback, useEffect, useId, useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { ErrorMessage } from '../../components/ErrorMessage';
import { JsonView } from '../../components/JsonView';
import { formatAgo, formatTime } from '../../lib/format';
import { useCan } from '../../lib/role';
import { Link } from '../../router';

/** A test from captured traffic (SPEC 7g), as the API lists it. */
interface WorkflowTest {
  id: string;
  name: string;
  sourceExecutionId: string | null;
  createdAt: string;
}

interface StepDiff {
  step: string;
  result: 'same' | 'changed' | 'missing' | 'added';
  expected?: { status: string; output: unknown };
  actual?: { status: string; output: unknown };
}

/** POST /workflows/:id/tests/run. */
export interface SuiteRun {
  target: 'draft' | 'published';
  version: number;
  passed: number;
  failed: number;
  results: {
    testId: string;
    name: string;
    status: 'passed' | 'failed';
    run: { status: string; error: { message?: string } | null };
    steps: StepDiff[];
    outcome?: { expected: { status: string; output: unknown }; actual: { status: string; output: unknown } };
  }[];
}

export function runTests(workflowId: string, target: 'draft' | 'published'): Promise<SuiteRun> {
  return api<SuiteRun>('POST', `/workflows/${encodeURIComponent(workflowId)}/tests/run`, { target });
}

/**
 * The workflow's tests from captured traffic: each made from an execution ("Make a test" on its
 * page), run here against the draft or the published version with the effects answered by their
 * recordings, and what differs shown per step.
 */
export function TestsPanel({ workflowId }: { workflowId: string }) {
  const id = useId();
  const canEdit = useCan('editor');
  const [tests, setTests] = useState<WorkflowTest[] | null>(null);
  const [suite, setSuite] = useState<SuiteRun | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(async () => {
    try {
      const r = await api<{ items: WorkflowTest[] }>(
        'GET',
        `/workflows/${encodeURIComponent(workflowId)}/tests`,
      );
      setTests(r.items);
    } catch (err) {
      setError(asApiError(err));
    }
  }, [workflowId]);
  useEffect(() => {
    load();
  }, [load]);
  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <h2 id={`${id}-title`}>Tests</h2>
        {canEdit && tests !== null && tests.length > 0 && (
          <div className="row">
            <button
              type="button"
              className="button small"
              disabled={busy}
              onClick={() => act(async () => setSuite(await runTests(workflowId, 'draft')))}
            >
              Run against the draft
            </button>
            <button
              type="button"
              className="button small"
              disabled={busy}
              onClick={() => act(async () => setSuite(await runTests(workflowId, 'published')))}
            >
              Run against the published version
            </button>
          </div>
        )}
      </div>
      <ErrorMessage error={error} />
      {tests !== null && tests.length === 0 && (
        <p className="muted small">
          No tests yet. Open an execution of this workflow and choose <strong>Make a test</strong>: its
          request and what its steps gave become a test, its calls to other systems become recordings, and
          every change can be checked against it before it goes live.
        </p>
      )}
      {tests !== null && tests.length > 0 && (
        <ul className="plain-list">
          {tests.map((t) => (
            <li key={t.id} className="row">
              <span>
                <strong>{t.name}</strong>{' '}
                <span className="muted small" title={formatTime(t.createdAt)}>
                  made {formatAgo(t.createdAt)}
                  {t.sourceExecutionId && (
                    <>
                      {' '}
                      from{' '}
                      <Link to={`/executions/${encodeURIComponent(t.sourceExecutionId)}`}>an execution</Link>
                    </>
                  )}
                </span>
              </span>
              {canEdit && (
                <button
                  type="button"
                  className="button small"
                  disabled={busy}
                  aria-label={`Delete test ${t.name}`}
                  onClick={() =>
                    act(async () => {
                      await api(
                        'DELETE',
                        `/workflows/${encodeURIComponent(workflowId)}/tests/${encodeURIComponent(t.id)}`,
                      );
                      setSuite(null);
                      await load();
                    })
                  }
                >
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {suite && <SuiteResults suite={suite} />}
    </section>
  );
}

/** A suite's result: a line for the whole, and each failed test's differing steps. */
export function SuiteResults({ suite }: { suite: SuiteRun }) {
  const label = suite.target === 'draft' ? `draft v${suite.version}` : `published v${suite.version}`;
  return (
    <div className="test-results" data-testid="test-results">
      <p className={suite.failed > 0 ? 'field-error' : 'notice small'} role="status">
        {suite.failed > 0
          ? `${suite.failed} of ${suite.passed + suite.failed} tests fail on ${label}.`
          : `All ${suite.passed} tests pass on ${label}.`}
      </p>
      {suite.results
        .filter((r) => r.status === 'failed')
        .map((r) => (
          <details key={r.testId} open className="test-failure">
            <summary>
              <strong>{r.name}</strong>: run {r.run.status}
              {r.run.error?.message ? ` — ${r.run.error.message}` : ''}
            </summary>
            <ul className="plain-list">
              {r.steps
                .filter((s) => s.result !== 'same')
                .map((s) => (
                  <li key={s.step}>
                    <span className="diff-step">
                      <code>{s.step}</code> {DIFF_LABELS[s.result]}
                    </span>
                    {s.result === 'changed' && (
                      <div className="version-diff">
                        <JsonView value={s.expected?.output} label="Expected" />
                        <JsonView value={s.actual?.output} label="Now" />
                      </div>
                    )}
                  </li>
                ))}
            </ul>
          </details>
        ))}
    </div>
  );
}

const DIFF_LABELS: Record<StepDiff['result'], string> = {
  same: 'same',
  changed: 'gives another output',
  missing: 'no longer runs',
  added: 'runs, and did not before',
};
