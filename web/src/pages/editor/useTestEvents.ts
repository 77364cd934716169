/**
 * The test side of the editor: the listener (open, countdown, stop), captures arriving live over
 * Server-Sent Events, earlier test events and the learned schema. The test run a capture starts is
 * handed to `onCapture` (the editor follows it as its last test run: useTestRun.ts).
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { withBase } from '../../base';
import type { LearnedSchema, Listener, Page, TestEvent } from '../../types';

export interface TestEvents {
  events: TestEvent[] | null;
  selected: TestEvent | undefined;
  select: (id: string) => void;
  schema: LearnedSchema | null;
  listener: Listener | null;
  /** Why the last listener closed without a capture. */
  closedNote: string | null;
  streamDown: boolean;
  error: ApiError | null;
  announcement: string;
  start: (timeoutSeconds: number) => Promise<void>;
  stop: () => Promise<void>;
}

export function useTestEvents(workflowId: string, onCapture: (event: TestEvent) => void): TestEvents {
  const base = `/workflows/${encodeURIComponent(workflowId)}`;
  const [events, setEvents] = useState<TestEvent[] | null>(null);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [schema, setSchema] = useState<LearnedSchema | null>(null);
  const [listener, setListener] = useState<Listener | null>(null);
  const [closedNote, setClosedNote] = useState<string | null>(null);
  const [streamDown, setStreamDown] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const captured = useRef(onCapture);
  captured.current = onCapture;

  const loadSchema = useCallback(async () => {
    try {
      setSchema(await api<LearnedSchema>('GET', `${base}/schema`));
    } catch (err) {
      setError(asApiError(err));
    }
  }, [base]);

  const loadEvents = useCallback(async () => {
    try {
      const page = await api<Page<TestEvent>>('GET', `${base}/test-events?limit=50`);
      setEvents(page.items);
    } catch (err) {
      setError(asApiError(err));
    }
  }, [base]);

  const addEvent = useCallback(
    (event: TestEvent) => {
      setEvents((list) => [event, ...(list ?? []).filter((e) => e.id !== event.id)]);
      setSelectedId(event.id);
      setAnnouncement(
        `Test event received: ${event.item.method ?? ''} request with ${Object.keys(asObject(event.item.body)).length} body fields.`,
      );
      captured.current(event);
      loadSchema();
    },
    [loadSchema],
  );

  useEffect(() => {
    loadEvents();
    loadSchema();
  }, [loadEvents, loadSchema]);

  // Live captures; the browser reconnects by itself (the server asks for 3 s) after a drop.
  useEffect(() => {
    const source = new EventSource(withBase(`/api/v1${base}/test-events/stream`));
    source.addEventListener('open', () => setStreamDown(false));
    source.addEventListener('error', () => setStreamDown(true));
    source.addEventListener('listening', (e) => {
      const data = JSON.parse((e as MessageEvent).data) as { listening: boolean; listener: Listener | null };
      setListener(data.listening ? data.listener : null);
      setStreamDown(false);
    });
    source.addEventListener('capture', (e) => {
      const event = JSON.parse((e as MessageEvent).data) as TestEvent;
      addEvent(event);
      setListener((l) => (l?.keepListening ? l : null));
      setClosedNote(null);
    });
    return () => source.close();
  }, [base, addEvent]);

  // The live region follows the listener: once it is gone (expired, stopped elsewhere, consumed),
  // "Listening" must not stay the last word. Captures and Stop say their own.
  const wasListening = useRef(false);
  useEffect(() => {
    const listening = listener !== null;
    if (wasListening.current && !listening)
      setAnnouncement((said) =>
        said.startsWith('Listening') ? 'Not listening for test events any more.' : said,
      );
    wasListening.current = listening;
  }, [listener]);

  // The countdown's end, and a check every 5 s while listening (in case the stream missed a capture).
  useEffect(() => {
    if (!listener) return;
    const left = new Date(listener.expiresAt).getTime() - Date.now();
    const expiry = setTimeout(
      () => {
        setListener(null);
        setClosedNote(
          'The listener closed: no request arrived in time. Listen again when you are ready to send one.',
        );
        setAnnouncement('The listener closed: no request arrived in time.');
      },
      Math.max(0, left),
    );
    const check = setInterval(async () => {
      try {
        const state = await api<{ listening: boolean; listener: Listener | null }>(
          'GET',
          `${base}/test-listener`,
        );
        if (!state.listening) {
          setListener(null);
          const page = await api<Page<TestEvent>>('GET', `${base}/test-events?limit=50`);
          const newest = page.items[0];
          setEvents(page.items);
          if (newest && newest.id !== events?.[0]?.id) addEvent(newest);
        }
      } catch {
        // The next check or the stream will tell.
      }
    }, 5000);
    return () => {
      clearTimeout(expiry);
      clearInterval(check);
    };
  }, [listener, base, addEvent, events]);

  const start = async (timeoutSeconds: number) => {
    setError(null);
    setClosedNote(null);
    try {
      const opened = await api<Listener>('POST', `${base}/test-listener`, { timeoutSeconds });
      setListener(opened);
      setAnnouncement('Listening for a test event.');
    } catch (err) {
      setError(asApiError(err));
    }
  };

  const stop = async () => {
    setError(null);
    try {
      await api('DELETE', `${base}/test-listener`);
      setListener(null);
      setClosedNote('Stopped listening.');
      setAnnouncement('Stopped listening.');
    } catch (err) {
      setError(asApiError(err));
    }
  };

  const selected = events?.find((e) => e.id === selectedId) ?? events?.[0];

  return {
    events,
    selected,
    select: setSelectedId,
    schema,
    listener,
    closedNote,
    streamDown,
    error,
    announcement,
    start,
    stop,
  };
}

function asObject(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
