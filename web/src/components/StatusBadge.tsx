import type { ExecutionStatus } from '../types';

const LABELS: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  waiting: 'Waiting',
  succeeded: 'Succeeded',
  failed: 'Failed',
  filtered: 'Filtered',
  skipped: 'Skipped',
};

export function StatusBadge({ status }: { status: ExecutionStatus | string }) {
  return <span className={`badge status-${status}`}>{LABELS[status] ?? status}</span>;
}

/** How each execution mode is named wherever one is shown or filtered by. */
export const MODE_LABELS: Record<string, string> = {
  production: 'Production',
  test: 'Test',
  error: 'Error workflow',
  alert: 'Alert workflow',
};

export function ModeBadge({ mode }: { mode: string }) {
  return <span className={`badge mode-${mode}`}>{MODE_LABELS[mode] ?? mode}</span>;
}
