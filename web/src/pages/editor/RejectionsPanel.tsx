import { useCallback, useEffect, useId, useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { ListTable } from '../../components/ListTable';
import { ErrorMessage } from '../../components/ErrorMessage';
import { formatAgo, formatTime } from '../../lib/format';

interface Rejection {
  at: string;
  mode: string;
  code: string;
  message: string;
  method: string;
  ip: string;
}

/**
 * The trigger's last refused calls (kept in the store for 7 days, up to 50): a caller
 * whose requests never start an execution sees why here — wrong method, bad signature, too big,
 * rate limited — without reading the server's logs.
 */
export function RejectionsPanel({ workflowId }: { workflowId: string }) {
  const id = useId();
  const [items, setItems] = useState<Rejection[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(async () => {
    setBusy(true);
    try {
      const r = await api<{ items: Rejection[] }>(
        'GET',
        `/workflows/${encodeURIComponent(workflowId)}/rejections`,
      );
      setItems(r.items);
      setError(null);
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  }, [workflowId]);
  useEffect(() => {
    load();
  }, [load]);

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <h2 id={`${id}-title`}>Refused calls</h2>
        <button type="button" className="button small" onClick={load} disabled={busy}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={error} />
      {items !== null && items.length === 0 && (
        <p className="muted small">None in the last 7 days: every call to this trigger was accepted.</p>
      )}
      {items !== null && items.length > 0 && (
        <ListTable
          actions={false}
          caption="Refused calls to this trigger, newest first"
          columns={['When', 'Call', 'Why']}
        >
          {items.map((r) => (
            <tr key={`${r.at}-${r.ip}-${r.code}`}>
              <td title={formatTime(r.at)}>{formatAgo(r.at)}</td>
              <td>
                <code>{r.method}</code> {r.mode === 'test' ? 'test URL' : 'production URL'}
                <br />
                <span className="muted small">from {r.ip}</span>
              </td>
              <td>
                <code className="small">{r.code}</code>
                <br />
                <span className="small">{r.message}</span>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}
