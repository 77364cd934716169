import { type FormEvent, useEffect, useId, useMemo, useState } from 'react';
import { type ApiError, api, asApiError, qs } from '../api';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable } from '../components/ListTable';
import { formatAgo, formatTime } from '../lib/format';
import { useTitle } from '../lib/title';
import { Link, navigate } from '../router';
import type { Page } from '../types';
import { AUDIT_ACTIONS } from '../../../src/shared/audit-actions';

interface AuditEntry {
  id: string;
  at: string;
  actor: { type: 'user' | 'token' | 'system'; id: string | null; name: string };
  action: string;
  target: { type: string; id: string | null; name: string | null };
  details: Record<string, unknown>;
  ip: string | null;
}

/**
 * The audit log (SPEC 11b), for admins and the owner: who changed what, when and from where,
 * newest first, filtered by actor, action and workflow (kept in the URL, so a filtered view is a link).
 */
export function AuditList({ search }: { search: string }) {
  useTitle('Audit log');
  const id = useId();
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const filters = {
    actor: params.get('actor') ?? '',
    action: params.get('action') ?? '',
    workflowId: params.get('workflowId') ?? '',
  };
  const [actor, setActor] = useState(filters.actor);
  const [items, setItems] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  const query = qs({ ...filters, limit: 50 });
  useEffect(() => {
    let cancelled = false;
    api<Page<AuditEntry>>('GET', `/audit${query}`).then(
      (page) => {
        if (cancelled) return;
        setItems(page.items);
        setCursor(page.nextCursor);
        setError(null);
      },
      (err) => !cancelled && setError(asApiError(err)),
    );
    return () => {
      cancelled = true;
    };
  }, [query]);

  const more = async () => {
    if (!cursor) return;
    try {
      const page = await api<Page<AuditEntry>>('GET', `/audit${qs({ ...filters, limit: 50, cursor })}`);
      setItems((list) => [...(list ?? []), ...page.items]);
      setCursor(page.nextCursor);
    } catch (err) {
      setError(asApiError(err));
    }
  };

  const go = (next: Partial<typeof filters>) =>
    navigate(`/audit${qs({ ...filters, ...next })}`, { replace: true });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    go({ actor: actor.trim() });
  };

  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>Audit log</h1>
      </div>
      <form className="card inline-form filters" onSubmit={submit}>
        <div className="field compact">
          <label htmlFor={`${id}-actor`} className="label">
            Actor
          </label>
          <input
            id={`${id}-actor`}
            className="input"
            value={actor}
            placeholder="email, token name or id"
            onChange={(e) => setActor(e.target.value)}
          />
        </div>
        <div className="field compact">
          <label htmlFor={`${id}-action`} className="label">
            Action
          </label>
          <select
            id={`${id}-action`}
            className="input"
            value={filters.action}
            onChange={(e) => go({ action: e.target.value })}
          >
            <option value="">All actions</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="button small filter-submit">
          Filter
        </button>
        {filters.workflowId && (
          <p className="help">
            Only workflow <code>{filters.workflowId}</code>.{' '}
            <button type="button" className="button small" onClick={() => go({ workflowId: '' })}>
              Show all
            </button>
          </p>
        )}
      </form>
      <ErrorMessage error={error} />
      {items === null && !error && <p className="muted">Loading the audit log…</p>}
      {items !== null && items.length === 0 && <p className="muted">Nothing recorded matches.</p>}
      {items !== null && items.length > 0 && (
        <ListTable
          caption="Audit log, newest first"
          columns={['When', 'Actor', 'Action', 'Target', 'Details', 'Address']}
          actions={false}
          onMore={cursor ? more : undefined}
        >
          {items.map((e) => (
            <tr key={e.id} data-testid="audit-row">
              <td title={formatTime(e.at)}>{formatAgo(e.at)}</td>
              <th scope="row">
                <Link
                  to={`/audit${qs({ ...filters, actor: e.actor.id ?? e.actor.name })}`}
                  title={`Only what ${e.actor.name} did`}
                  onClick={() => setActor(e.actor.id ?? e.actor.name)}
                >
                  {e.actor.name}
                </Link>
                {e.actor.type !== 'user' && <span className="muted small"> ({e.actor.type})</span>}
              </th>
              <td>
                <code>{e.action}</code>
              </td>
              <td>
                {e.target.type === 'workflow' && e.target.id ? (
                  <Link to={`/workflows/${encodeURIComponent(e.target.id)}`}>
                    {e.target.name ?? e.target.id}
                  </Link>
                ) : (
                  (e.target.name ?? e.target.id ?? '')
                )}{' '}
                <span className="muted small">{e.target.type}</span>
              </td>
              <td className="small">
                {Object.keys(e.details).length > 0 ? <code>{JSON.stringify(e.details)}</code> : ''}
              </td>
              <td className="small muted">{e.ip ?? ''}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}
