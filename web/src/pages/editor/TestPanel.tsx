import { type ReactNode, useEffect, useId, useState } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage';
import { Notice } from '../../components/Notice';
import { SchemaTree } from '../../components/SchemaTree';
import { RequestTabs } from '../../components/RequestTabs';
import { formatCountdown, formatTime } from '../../lib/format';
import { testEventLabel } from '../../lib/testEvents';
import type { TestEvents } from './useTestEvents';
import type { TestRun } from './useTestRun';

const LISTEN_SECONDS = 120;

function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

/**
 * "Listen for test event": opens a listener (saving first), counts down, waits, and shows the
 * captured request live as a table, as JSON and as the learned schema. Earlier test events can be
 * browsed and replayed into the draft (saving pending edits first), as a test run; the last test
 * run, whatever started it, is the one line `lastRun` (the cards show it step by step).
 */
export function TestPanel({
  test,
  testRun,
  lastRun,
  testUrl,
  curl,
  onListen,
  busy,
  savedNote,
  draftVersion,
}: {
  test: TestEvents;
  /** Replay into draft, and its error. */
  testRun: Pick<TestRun, 'replay' | 'busy' | 'error'>;
  lastRun: ReactNode;
  testUrl: string;
  curl: string;
  /** Save pending changes, then start listening. */
  onListen: (seconds: number) => Promise<void>;
  busy: boolean;
  /** What Listen or Replay saved first ("Saved as draft v9 — live traffic still runs v7"). */
  savedNote: string;
  /** The latest saved version: what a replay from here runs (edits not saved yet are saved first). */
  draftVersion: number;
}) {
  const id = useId();
  const [tab, setTab] = useState('table');
  const { listener, selected, events, schema } = test;
  const now = useNow(listener !== null);
  const secondsLeft = listener ? (new Date(listener.expiresAt).getTime() - now) / 1000 : 0;

  return (
    <section className="card test-panel" aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <h2 id={`${id}-title`}>Test event</h2>
        {listener ? (
          <button type="button" className="button" onClick={test.stop}>
            Stop listening
          </button>
        ) : (
          <button
            type="button"
            className="button primary"
            onClick={() => onListen(LISTEN_SECONDS)}
            disabled={busy}
          >
            Listen for test event
          </button>
        )}
      </div>

      <p className="visually-hidden" aria-live="polite">
        {test.announcement}
      </p>
      <Notice text={savedNote} />
      <ErrorMessage error={test.error} />

      {listener && (
        <div className="listening">
          <div className="listening-head">
            <span className="pulse" aria-hidden="true" />
            <strong>Waiting for a request on the test URL…</strong>
            <span className="countdown" aria-hidden="true">
              {formatCountdown(secondsLeft)}
            </span>
          </div>
          <progress
            className="countdown-bar"
            max={LISTEN_SECONDS}
            value={Math.max(0, secondsLeft)}
            aria-label="Time left to listen"
            aria-valuetext={`${Math.max(0, Math.ceil(secondsLeft))} seconds left`}
          />
          <p className="small">
            Send a request to <code>{testUrl}</code>, for example:
          </p>
          <pre className="curl-block">{curl}</pre>
          {listener.keepListening ? (
            <p className="small muted">Every request is captured until the countdown ends.</p>
          ) : (
            <p className="small muted">The first request is captured; then listening stops.</p>
          )}
        </div>
      )}
      {!listener && test.closedNote && <p className="notice small">{test.closedNote}</p>}
      {test.streamDown && (
        <p className="notice small" role="status">
          The live connection dropped; reconnecting. Captures still arrive, a few seconds later.
        </p>
      )}

      {events !== null && events.length === 0 && !listener && (
        <p className="muted">
          No test events yet. Click <strong>Listen for test event</strong>, then call the test URL: the
          request appears here, and its fields become available to the steps.
        </p>
      )}

      {selected && (
        <>
          <div className="event-bar">
            <div className="field compact">
              <label htmlFor={`${id}-event`} className="label">
                Showing
              </label>
              <select
                id={`${id}-event`}
                className="input"
                value={selected.id}
                onChange={(e) => test.select(e.target.value)}
              >
                {events?.map((e, i) => (
                  <option key={e.id} value={e.id}>
                    {testEventLabel(e.item, formatTime(e.receivedAt))} {i === 0 ? '(latest)' : ''}
                  </option>
                ))}
              </select>
            </div>
            <div className="event-run">
              <button
                type="button"
                className="button small"
                onClick={() => selected.executionId && testRun.replay(selected.executionId)}
                disabled={!selected.executionId || testRun.busy !== null || busy}
                title={`Run this request again as a test run of the draft (v${draftVersion}, or the edits on screen saved first); live traffic is not affected`}
              >
                {testRun.busy === 'replay' ? 'Replaying…' : 'Replay into draft'}
              </button>
            </div>
          </div>
          {lastRun}
          <ErrorMessage
            error={testRun.error?.from === 'replay' ? testRun.error.error : null}
            title="Not replayed"
          />
          <p className="small muted event-meta">
            <strong>{selected.item.method}</strong> <code>/{selected.item.path}</code> · received{' '}
            {formatTime(selected.receivedAt)} ·{' '}
            {String(selected.item.headers?.['content-type'] ?? 'no content type')}
          </p>
          <RequestTabs
            item={selected.item}
            label="Captured request"
            jsonLabel="Captured request (JSON)"
            selected={tab}
            onSelect={setTab}
            more={[
              {
                id: 'schema',
                label: 'Schema',
                content: schema ? (
                  <SchemaTree schema={schema.jsonSchema} samples={schema.samples} />
                ) : (
                  <p className="muted">Loading…</p>
                ),
              },
            ]}
          />
        </>
      )}
    </section>
  );
}
