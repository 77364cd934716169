import { StatusBadge } from '../../components/StatusBadge';
import { Link } from '../../router';
import type { LastTestRun, RunSource } from './useTestRun';

const SOURCES: Record<RunSource, string> = {
  capture: 'a capture',
  replay: 'Replay into draft',
  run: 'Run now',
  earlier: 'before you opened this page',
};

/**
 * The last test run in one line: its version, what started it, its status, and whether its results
 * still speak for the draft on screen. The cards show it step by step.
 */
export function LastRunLine({
  last,
  stale,
  live,
}: {
  last: LastTestRun | null;
  stale: string | undefined;
  /** Announced as it changes (once on the page: the header's). */
  live?: boolean;
}) {
  return (
    <p
      className="small last-run"
      data-testid={live ? 'last-run' : undefined}
      aria-live={live ? 'polite' : undefined}
    >
      {last && (
        <>
          <Link to={`/executions/${encodeURIComponent(last.executionId)}`}>Last test run</Link>
          {last.execution ? (
            <>
              {' '}
              (v{last.execution.workflowVersion}, {SOURCES[last.source]}):{' '}
              <StatusBadge status={last.execution.status} />
              {stale && <span className="muted"> · {stale}</span>}
            </>
          ) : (
            ` (${SOURCES[last.source]}): starting…`
          )}
        </>
      )}
    </p>
  );
}

/** The editor's test bar, under its header: the last test run, and Run now. */
export function TestBar({
  last,
  stale,
  running,
  disabled,
  onRunNow,
}: {
  last: LastTestRun | null;
  stale: string | undefined;
  /** Run now (or a replay) is starting. */
  running: boolean;
  disabled: boolean;
  onRunNow: () => void;
}) {
  return (
    <div className="test-bar">
      <LastRunLine last={last} stale={stale} live />
      <button
        type="button"
        className="button small"
        onClick={onRunNow}
        disabled={disabled || running}
        title="Run the draft once as a test run (edits on screen saved first) with the test event on screen, or {} without one; live traffic is not affected"
      >
        {running ? 'Running…' : 'Run now'}
      </button>
    </div>
  );
}
