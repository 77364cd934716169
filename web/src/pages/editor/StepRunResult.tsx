import { JsonView } from '../../components/JsonView';
import { Link } from '../../router';
import type { SimResult } from '../../lib/simulate';
import type { StepRun } from '../../lib/testRun';

/** `/fields/total` → "fields › total". */
function fieldName(field: string): string {
  return field
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join(' › ');
}

/** The step's status in the last test run, in a few words ("Failed in test run v5"). */
export function runStatusText(lastRun: StepRun): string {
  const v = `v${lastRun.version}`;
  const words: Record<StepRun['status'], string> = {
    succeeded: `Succeeded in test run ${v}`,
    failed: `Failed in test run ${v}`,
    filtered: `Filtered in test run ${v}`,
    waiting: `Waiting in test run ${v}`,
    notRun: `Not run in test run ${v}`,
    pending: `Test run ${v} running…`,
  };
  return words[lastRun.status];
}

/**
 * What the last test run did with a step, on the step itself when it went wrong: failed (its
 * error, the field, the expression and the position in it) or never reached. A result of another
 * version than the one on screen says so and is not shown as the draft's failure.
 */
export function StepRunResult({ lastRun }: { lastRun: StepRun | undefined }) {
  if (!lastRun) return null;
  const run = <Link to={`/executions/${lastRun.executionId}`}>last test run</Link>;
  if (lastRun.stale) {
    if (lastRun.status !== 'failed') return null;
    return (
      <p className="small muted step-run-stale" role="note" data-testid="stale-result">
        Failed in the {run} ({lastRun.stale}): run a test again to see what this version does.
      </p>
    );
  }
  if (lastRun.status === 'notRun')
    return (
      <p className="small muted step-not-run" role="note">
        Not run in the {run} (v{lastRun.version}): the run stopped before this step.
      </p>
    );
  if (lastRun.status !== 'failed') return null;
  const e = lastRun.error ?? { message: 'The step failed.' };
  return (
    <div className="error step-run-error" role="note">
      <p className="error-title">
        Failed in the {run} (v{lastRun.version})
      </p>
      <p className="error-message">{e.message}</p>
      {(e.field || e.expression) && (
        <p className="small">
          {e.field && (
            <>
              In <strong>{fieldName(e.field)}</strong>
            </>
          )}
          {e.expression && (
            <>
              {e.field ? ', expression ' : 'Expression '}
              <code className="pre-spaces">{`{{${e.expression}}}`}</code>
            </>
          )}
          {e.position !== undefined &&
            `, at position ${e.position} (counted from the first character after {{)`}
        </p>
      )}
    </div>
  );
}

/**
 * The selected step's last test output: what the last test run did with it (its output, or why it
 * failed or never ran), else its preview on the event on screen.
 */
export function StepLastOutput({ result, label }: { result: SimResult | undefined; label: string }) {
  if (!result)
    return (
      <p className="muted">
        No test output yet: listen for a test event, replay one or use Run now, to see what this step gives.
      </p>
    );
  const run = result.lastRun;
  const ran = run && !run.stale && ['succeeded', 'filtered', 'waiting'].includes(run.status);
  return (
    <div className="step-output">
      <StepRunResult lastRun={run} />
      {ran ? (
        <>
          <p className="small muted">
            Output in the <Link to={`/executions/${run.executionId}`}>last test run</Link> (v{run.version}):
          </p>
          <JsonView value={run.output ?? null} label={`Test output of ${label}`} />
        </>
      ) : (
        <>
          {result.notTaken && (
            <p className="small muted">
              The event on screen takes another branch: this is what the step would give.
            </p>
          )}
          {result.note && <p className="small muted">{result.note}</p>}
          {result.error ? (
            <p className="field-error">Fails on the event on screen: {result.error}</p>
          ) : (
            <JsonView value={result.output} label={`Test output of ${label}`} />
          )}
        </>
      )}
    </div>
  );
}
