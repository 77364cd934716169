/**
 * The editor's last test run: one piece of state, whichever started it — a capture on the test URL,
 * Replay into draft, or Run now (SPEC 7f: POST /workflows/:id/run) — followed until it finishes.
 * A newer run replaces it; on opening, it is the workflow's newest test execution. Replay and Run
 * now save pending edits first (as Listen does), so they test what is on screen.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { runFinished } from '../../lib/testRun';
import type { Execution, Page, TriggerItem } from '../../types';

/** How the run was started: a capture, Replay into draft, Run now, or before the page opened. */
export type RunSource = 'capture' | 'replay' | 'run' | 'earlier';

export interface LastTestRun {
  executionId: string;
  source: RunSource;
  /** The execution as last read (absent until the first read answers). */
  execution?: Execution;
}

export interface TestRun {
  last: LastTestRun | null;
  /** Replay or Run now on its way (saving first, then starting the run). */
  busy: 'replay' | 'run' | null;
  /** Why the last Replay or Run now did not start (said beside its button). */
  error: { from: 'replay' | 'run'; error: ApiError } | null;
  /** Follows a run started elsewhere (a capture's). */
  follow: (executionId: string, source: RunSource) => void;
  /** Runs a test event's stored item again through the draft. */
  replay: (eventExecutionId: string) => Promise<void>;
  /** Runs the draft with `item` (the server's default without: the newest test event's item). */
  runNow: (item?: TriggerItem) => Promise<void>;
}

/** How often a run in progress is read again. */
const POLL_MS = 500;
/** A run still going after this is left to the executions page (a `wait` may take days). */
const FOLLOW_MS = 120_000;

export function useTestRun(
  workflowId: string,
  /** Saves pending edits before a replay or Run now; false when the save failed (the run does not start then). */
  saveFirst: (kind: 'replay' | 'run') => Promise<boolean>,
): TestRun {
  const [last, setLast] = useState<LastTestRun | null>(null);
  const [busy, setBusy] = useState<TestRun['busy']>(null);
  const [error, setError] = useState<TestRun['error']>(null);
  /** The run being followed: a poll of any other one stops. */
  const followed = useRef<string | null>(null);

  const follow = useCallback((executionId: string, source: RunSource) => {
    followed.current = executionId;
    setLast({ executionId, source });
    const until = Date.now() + FOLLOW_MS;
    const poll = async () => {
      if (followed.current !== executionId) return;
      let next = POLL_MS;
      try {
        const execution = await api<Execution>('GET', `/executions/${encodeURIComponent(executionId)}`);
        if (followed.current !== executionId) return;
        setLast({ executionId, source, execution });
        if (runFinished(execution)) return;
      } catch {
        // Read again a little later; the link to the execution stays on screen meanwhile.
        next = POLL_MS * 4;
      }
      if (Date.now() < until) setTimeout(poll, next);
    };
    poll();
  }, []);

  // On opening: the newest test run of the workflow, unless one was started since.
  useEffect(() => {
    followed.current = null;
    setLast(null);
    api<Page<Execution>>(
      'GET',
      `/executions?workflowId=${encodeURIComponent(workflowId)}&mode=test&limit=1`,
    ).then(
      (page) => {
        const newest = page.items[0];
        if (newest && followed.current === null) follow(newest.id, 'earlier');
      },
      () => undefined,
    );
    return () => {
      followed.current = null;
    };
  }, [workflowId, follow]);

  const start = async (kind: 'replay' | 'run', send: () => Promise<{ executionId: string }>) => {
    setError(null);
    setBusy(kind);
    try {
      if (!(await saveFirst(kind))) return;
      const { executionId } = await send();
      follow(executionId, kind);
    } catch (err) {
      setError({ from: kind, error: asApiError(err) });
    } finally {
      setBusy(null);
    }
  };

  return {
    last,
    busy,
    error,
    follow,
    // The editor tests the draft (SPEC 1/8: replay target "draft", in test mode).
    replay: (eventExecutionId) =>
      start('replay', () =>
        api('POST', `/executions/${encodeURIComponent(eventExecutionId)}/replay`, { target: 'draft' }),
      ),
    runNow: (item) =>
      start('run', () =>
        api('POST', `/workflows/${encodeURIComponent(workflowId)}/run`, item ? { item } : {}),
      ),
  };
}
