import { useEffect, useId, useMemo, useState } from 'react';
import { type ApiError, api, asApiError, qs } from '../api';
import { Backlog } from '../components/Backlog';
import { ListTable } from '../components/ListTable';
import { ErrorMessage } from '../components/ErrorMessage';
import { MODE_LABELS, ModeBadge, StatusBadge } from '../components/StatusBadge';
import { formatDuration, formatTime } from '../lib/format';
import { listAllWorkflows } from '../lib/workflows';
import { useTitle } from '../lib/title';
import { Link, navigate } from '../router';
import type { Execution, Page, Workflow } from '../types';

/** A page of the list; with `where`, how the search was answered (GET /executions `search`). */
interface SearchInfo {
  path: string;
  indexed: boolean;
  workflowIds?: string[];
  window?: number;
  hint?: string;
}
type SearchPage = Page<Execution> & { search?: SearchInfo };

const STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'filtered', 'skipped'];

/** Executions, newest first, filtered by workflow, status and mode (kept in the URL, so links work). */
export function ExecutionList({ search }: { search: string }) {
  const id = useId();
  const params = useMemo(() => new URLSearchParams(search), [search]);
  useTitle('Executions');
  const filters = {
    workflowId: params.get('workflowId') ?? '',
    status: params.get('status') ?? '',
    mode: params.get('mode') ?? '',
    where: params.get('where') ?? '',
  };
  /** The search box's text, sent (to the URL) on submit. */
  const [where, setWhere] = useState(filters.where);
  const [items, setItems] = useState<Execution[] | null>(null);
  /** How the last search was answered (through the index or not). */
  const [searched, setSearched] = useState<SearchInfo | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [workflows, setWorkflows] = useState<Workflow[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);

  useEffect(() => {
    listAllWorkflows().then(setWorkflows, () => undefined);
  }, []);

  const query = qs({ ...filters, limit: 50 });
  useEffect(() => {
    let cancelled = false;
    const load = async () => {
      try {
        const page = await api<SearchPage>('GET', `/executions${query}`);
        if (cancelled) return;
        setItems(page.items);
        setCursor(page.nextCursor);
        setSearched(page.search);
        setError(null);
      } catch (err) {
        if (!cancelled) setError(asApiError(err));
      }
    };
    setItems(null);
    load();
    // New executions arrive all the time: refresh the first page every 5 s.
    const timer = setInterval(load, 5000);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [query]);

  const more = async () => {
    if (!cursor) return;
    setLoadingMore(true);
    try {
      const page = await api<Page<Execution>>('GET', `/executions${qs({ ...filters, limit: 50, cursor })}`);
      setItems((list) => [...(list ?? []), ...page.items]);
      setCursor(page.nextCursor);
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setLoadingMore(false);
    }
  };

  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(key, value);
    else next.delete(key);
    const text = next.toString();
    navigate(`/executions${text ? `?${text}` : ''}`, { replace: true });
  };

  const names = Object.fromEntries(workflows.map((w) => [w.id, w.name]));
  const filterSelect = (
    key: 'workflowId' | 'status' | 'mode',
    label: string,
    options: [string, string][],
  ) => (
    <div className="field compact">
      <label htmlFor={`${id}-${key}`} className="label">
        {label}
      </label>
      <select
        id={`${id}-${key}`}
        className="input"
        value={filters[key]}
        onChange={(e) => setFilter(key, e.target.value)}
      >
        <option value="">All</option>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );

  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>Executions</h1>
        <Backlog />
      </div>
      <search className="filters" aria-label="Filter executions">
        {filterSelect(
          'workflowId',
          'Workflow',
          workflows.map((w) => [w.id, w.name]),
        )}
        {filterSelect(
          'status',
          'Status',
          STATUSES.map((s) => [s, s[0]!.toUpperCase() + s.slice(1)]),
        )}
        {filterSelect('mode', 'Mode', Object.entries(MODE_LABELS))}
        <form
          className="field compact where-filter"
          onSubmit={(e) => {
            e.preventDefault();
            setFilter('where', where.trim());
          }}
        >
          <label htmlFor={`${id}-where`} className="label">
            Trigger field = value
          </label>
          <div className="row">
            <input
              id={`${id}-where`}
              className="input mono"
              value={where}
              placeholder="body.order_id=o-1"
              aria-describedby={`${id}-where-help`}
              onChange={(e) => setWhere(e.target.value)}
            />
            <button type="submit" className="button small">
              Search
            </button>
          </div>
          <p id={`${id}-where-help`} className="visually-hidden">
            A field of the trigger item, an equals sign and its value, for example body.order_id=o-1
          </p>
        </form>
      </search>
      {filters.where && searched && (
        <p className="help" role="status">
          {searched.indexed ? (
            <>
              Indexed: <code>{searched.path}</code> is a searchable field
              {filters.workflowId
                ? ''
                : ` of ${searched.workflowIds?.length ?? 0} workflow(s); executions of other workflows are not searched`}
              .
            </>
          ) : (
            <>
              Not indexed: each request searches {searched.window?.toLocaleString('en') ?? 'a window of'}{' '}
              executions, newest first. To index it, declare <code>{searched.path}</code> as a searchable
              field in the{' '}
              {filters.workflowId ? (
                <Link to={`/workflows/${encodeURIComponent(filters.workflowId)}`}>workflow's Settings</Link>
              ) : (
                "workflow's Settings"
              )}
              .
            </>
          )}
        </p>
      )}
      <ErrorMessage error={error} />
      {items === null && !error && <p className="muted">Loading executions…</p>}
      {items !== null && items.length === 0 && (
        <p className="muted">
          No executions
          {filters.workflowId || filters.status || filters.mode || filters.where
            ? ' match these filters'
            : ' yet'}
          {filters.where && cursor ? ' among the latest searched: load more to search older ones' : ''}. Each
          request to a webhook URL starts one.
        </p>
      )}
      {items !== null && items.length > 0 && (
        <ListTable
          actions={false}
          caption="Executions, newest first"
          columns={['Status', 'Workflow', 'Mode', 'Started', 'Duration', 'Attempt']}
          className="execution-table"
        >
          {items.map((e) => (
            <tr key={e.id}>
              <td>
                <Link
                  to={`/executions/${e.id}`}
                  aria-label={`Execution ${e.id}: ${e.status}`}
                  className="status-link"
                >
                  <StatusBadge status={e.status} />
                </Link>
              </td>
              <td>
                <Link to={`/executions/${e.id}`}>{names[e.workflowId] ?? e.workflowId}</Link>
                <span className="muted small"> · v{e.workflowVersion}</span>
                {e.concurrencyKey && (
                  <span className="muted small" title="Concurrency key">
                    {' '}
                    · key <code>{e.concurrencyKey}</code>
                  </span>
                )}
              </td>
              <td>
                <ModeBadge mode={e.mode} />
              </td>
              {/* data-label: on a phone the rows stack, and these say what they are. */}
              <td data-label="Started">{formatTime(e.startedAt ?? e.createdAt)}</td>
              <td data-label="Duration">{formatDuration(e.startedAt, e.finishedAt)}</td>
              <td data-label="Attempt">{e.attempt}</td>
            </tr>
          ))}
        </ListTable>
      )}
      {cursor && (
        <button type="button" className="button" onClick={more} disabled={loadingMore}>
          {loadingMore ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}
