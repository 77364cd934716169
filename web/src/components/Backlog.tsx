import { useEffect, useState } from 'react';
import { api } from '../api';
import { formatDuration } from '../lib/format';
import { Link } from '../router';

/** GET /executions/backlog (SPEC 7d). */
export interface BacklogNow {
  queued: number;
  oldestQueuedAt: string | null;
  inFlight: number;
  at: string;
}

/**
 * The executors' backlog, refreshed every 5 s: executions due and not taken yet (with the oldest
 * one's age) and those in flight. A backlog that keeps growing tells the user the executors are
 * behind (docs/scaling.md, "Sizing the executor"), not that executions were lost.
 */
export function Backlog() {
  const [now, setNow] = useState<BacklogNow | null>(null);
  useEffect(() => {
    let cancelled = false;
    const load = () =>
      api<BacklogNow>('GET', '/executions/backlog').then(
        (b) => !cancelled && setNow(b),
        () => undefined,
      );
    load();
    const timer = setInterval(load, 5000);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, []);
  if (!now) return null;
  const age = now.oldestQueuedAt ? formatDuration(now.oldestQueuedAt, now.at) : null;
  return (
    <p className="muted small backlog" role="status" aria-label="Backlog">
      <Link to="/executions?status=queued">{now.queued.toLocaleString('en')} queued</Link>
      {age && <> (oldest waiting {age})</>} · {now.inFlight.toLocaleString('en')} in flight
    </p>
  );
}
