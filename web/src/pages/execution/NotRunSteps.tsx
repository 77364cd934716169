import { useEffect, useState } from 'react';
import { api } from '../../api';
import type { Execution, Step } from '../../types';

const FINISHED = new Set(['succeeded', 'failed', 'filtered', 'skipped']);

/**
 * The steps of the version an execution ran that have no record in it: after a failure or a
 * filter the run stops, and those steps are listed as "Not run" rather than missing.
 * Empty while the run goes on, and when the version cannot be read.
 */
export function useNotRunSteps(execution: Execution | null): Step[] {
  const [steps, setSteps] = useState<Step[] | null>(null);
  const workflowId = execution?.workflowId;
  const version = execution?.workflowVersion;
  const finished = execution ? FINISHED.has(execution.status) : false;
  useEffect(() => {
    if (!workflowId || !version || !finished) return;
    let cancelled = false;
    api<{ steps: Step[] }>(
      'GET',
      `/workflows/${encodeURIComponent(workflowId)}/versions/${encodeURIComponent(String(version))}`,
    ).then(
      (v) => !cancelled && setSteps(v.steps),
      () => !cancelled && setSteps(null),
    );
    return () => {
      cancelled = true;
    };
  }, [workflowId, version, finished]);
  if (!execution || !steps || !finished) return [];
  const ran = new Set(execution.steps.map((s) => s.name));
  return steps.filter((s) => !ran.has(s.name));
}

export function NotRunStep({ step, index, reason }: { step: Step; index: number; reason: string }) {
  return (
    <li className="step exec-step not-run">
      <div className="step-head">
        <span className="step-number" aria-hidden="true">
          {index + 1}
        </span>
        <h3 className="step-title">
          <span className="visually-hidden">Step {index + 1}: </span>
          {step.name} <span className="muted small">({step.type})</span>
        </h3>
        <span className="badge status-not-run">Not run</span>
      </div>
      <p className="small muted">{reason}</p>
    </li>
  );
}

/** Why the steps after the last recorded one did not run. */
export function notRunReason(execution: Execution): string {
  const last = execution.steps[execution.steps.length - 1];
  if (execution.status === 'skipped')
    return 'Not run: a newer event of the same concurrency key had started (newest wins), so this older one was skipped.';
  if (execution.status === 'filtered') return `Not run: step "${last?.name ?? ''}" filtered the item out.`;
  if (execution.status === 'failed')
    return last?.status === 'failed'
      ? `Not run: the execution stopped when step "${last.name}" failed.`
      : 'Not run: the execution failed before this step.';
  return 'Not run.';
}
