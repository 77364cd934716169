import type { ExecutionStatus } from '../types';

const LABELS: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  waiting: 'Waiting',
  succeeded: 'Succeeded',
  failed: 'Failed',
  filtered: 'Filtered',
};

export function StatusBadge({ status }: { status: ExecutionStatus | string }) {
  return <span className={`badge status-${status}`}>{LABELS[status] ?? status}</span>;
}

export function ModeBadge({ mode }: { mode: string }) {
  return (
    <span className={`badge mode-${mode}`}>
      {mode === 'test' ? 'Test' : mode === 'error' ? 'Error workflow' : 'Production'}
    </span>
  );
}
