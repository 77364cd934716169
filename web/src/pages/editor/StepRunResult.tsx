import { JsonView } from '../../components/JsonView';
import { Link } from '../../router';
import type { SimResult } from '../../lib/simulate';

/** `/fields/total` → "fields › total". */
function fieldName(field: string): string {
  return field
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join(' › ');
}

/**
 * What the last test run did with a step, on the step itself: failed (its error, the field, the
 * expression and the position in it) or never reached (issue 17 #4). Nothing when it went well.
 */
export function StepRunResult({ lastRun }: { lastRun: SimResult['lastRun'] }) {
  if (!lastRun) return null;
  const run = <Link to={`/executions/${lastRun.executionId}`}>last test run</Link>;
  if (lastRun.notRun)
    return (
      <p className="small muted step-not-run" role="note">
        Not run in the {run} (v{lastRun.version}): the run stopped before this step.
      </p>
    );
  const e = lastRun.failed;
  if (!e) return null;
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
 * The selected step's last test output: what the last test run did with it (failed, not run), then
 * its output on the event on screen (the run's own where it ran), or why it fails.
 */
export function StepLastOutput({ result, label }: { result: SimResult | undefined; label: string }) {
  if (!result)
    return (
      <p className="muted">
        No test output yet: listen for a test event, or choose one on the trigger card, to see what this step
        gives.
      </p>
    );
  return (
    <div className="step-output">
      <StepRunResult lastRun={result.lastRun} />
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
    </div>
  );
}
