import { type FormEvent, useCallback, useEffect, useId, useState } from 'react';
import { ApiError, api, asApiError, qs } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { formatAgo, formatTime } from '../lib/format';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import { DATA_KEY_MAX_CHARS } from '../../../src/shared/data-store';
import type { Page } from '../types';

interface Entry {
  key: string;
  value: unknown;
  expiresAt: string | null;
  updatedAt: string;
}

interface WorkflowRef {
  id: string;
  name: string;
}

/**
 * The data store (SPEC 7f): what `store` steps keep between executions, in the global scope or a
 * workflow's. Browse by key prefix, edit a value as JSON (with an expiry), delete an entry.
 */
export function DataStorePage() {
  useTitle('Data');
  const id = useId();
  const [error, setError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [workflows, setWorkflows] = useState<WorkflowRef[]>([]);
  // '' : the global scope; else a workflow's id.
  const [scope, setScope] = useState('');
  const [prefix, setPrefix] = useState('');
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [editing, setEditing] = useState<{ key: string; json: string; ttl: string; isNew: boolean } | null>(
    null,
  );
  const [deleting, setDeleting] = useState<Entry | null>(null);
  const saving = useAction(setError);
  const removal = useAction(setError);

  const where = useCallback(
    () => (scope === '' ? { scope: 'global' } : { scope: 'workflow', workflowId: scope }),
    [scope],
  );
  const entryPath = (key: string) =>
    `/store/${where().scope}/${encodeURIComponent(key)}${scope === '' ? '' : qs({ workflowId: scope })}`;

  const load = useCallback(
    async (after?: string) => {
      try {
        const page = await api<Page<Entry>>(
          'GET',
          `/store${qs({ ...where(), ...(prefix ? { prefix } : {}), limit: 50, ...(after ? { cursor: after } : {}) })}`,
        );
        setEntries((list) => (after ? [...(list ?? []), ...page.items] : page.items));
        setCursor(page.nextCursor);
      } catch (err) {
        setError(asApiError(err));
      }
    },
    [where, prefix],
  );

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    api<Page<WorkflowRef>>('GET', `/workflows${qs({ limit: 200 })}`).then(
      (page) => setWorkflows(page.items),
      (err) => setError(asApiError(err)),
    );
  }, []);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    setError(null);
    setNotice(null);
    let value: unknown;
    try {
      value = JSON.parse(editing.json);
    } catch {
      setError(new ApiError(400, 'validation_failed', 'The value is not JSON (text goes in double quotes).'));
      return;
    }
    await saving.run(async () => {
      const ttl = editing.ttl.trim() === '' ? undefined : Number(editing.ttl);
      await api('PUT', entryPath(editing.key), { value, ...(ttl !== undefined ? { ttlSeconds: ttl } : {}) });
      setNotice(`Saved "${editing.key}".`);
      setEditing(null);
      await load();
    });
  };

  const remove = async () => {
    if (!deleting) return;
    const entry = deleting;
    await removal.run(async () => {
      await api('DELETE', entryPath(entry.key));
      setEntries((list) => list?.filter((e) => e.key !== entry.key) ?? null);
      setNotice(`Deleted "${entry.key}".`);
    });
    setDeleting(null);
  };

  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>Data</h1>
        <button
          type="button"
          className="button primary"
          onClick={() => setEditing({ key: '', json: '', ttl: '', isNew: true })}
        >
          Add entry
        </button>
      </div>
      <p className="muted">
        What <code>store</code> steps keep between executions: in the global scope, shared by every workflow,
        or in one workflow's own.
      </p>
      <div className="card inline-form filters">
        <div className="field compact">
          <label htmlFor={`${id}-scope`} className="label">
            Scope
          </label>
          <select
            id={`${id}-scope`}
            className="input"
            value={scope}
            onChange={(e) => setScope(e.target.value)}
          >
            <option value="">Global</option>
            {workflows.map((w) => (
              <option key={w.id} value={w.id}>
                Workflow: {w.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field compact">
          <label htmlFor={`${id}-prefix`} className="label">
            Key starts with
          </label>
          <input
            id={`${id}-prefix`}
            className="input"
            value={prefix}
            maxLength={DATA_KEY_MAX_CHARS}
            placeholder="order:"
            onChange={(e) => setPrefix(e.target.value)}
          />
        </div>
      </div>

      {editing && (
        <form
          className="card"
          onSubmit={save}
          aria-label={editing.isNew ? 'New entry' : `Edit ${editing.key}`}
        >
          <label htmlFor={`${id}-key`} className="label">
            Key
          </label>
          <input
            id={`${id}-key`}
            className="input"
            value={editing.key}
            required
            maxLength={DATA_KEY_MAX_CHARS}
            readOnly={!editing.isNew}
            onChange={(e) => setEditing({ ...editing, key: e.target.value })}
          />
          <label htmlFor={`${id}-value`} className="label">
            Value (JSON)
          </label>
          <textarea
            id={`${id}-value`}
            className="input mono"
            rows={6}
            required
            value={editing.json}
            onChange={(e) => setEditing({ ...editing, json: e.target.value })}
          />
          <label htmlFor={`${id}-ttl`} className="label">
            Expires after (seconds, empty: never)
          </label>
          <input
            id={`${id}-ttl`}
            className="input"
            inputMode="numeric"
            value={editing.ttl}
            onChange={(e) => setEditing({ ...editing, ttl: e.target.value })}
          />
          <div className="row">
            <button type="submit" className="button primary" disabled={saving.busy}>
              Save
            </button>
            <button type="button" className="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}

      <Notice text={notice} />
      <ErrorMessage error={error} />

      {entries === null && !error && <p className="muted">Loading entries…</p>}
      {entries !== null && entries.length === 0 && <p className="muted">No entries here yet.</p>}
      {entries !== null && entries.length > 0 && (
        <ListTable
          caption="Data store entries"
          columns={['Key', 'Value', 'Expires', 'Updated']}
          onMore={cursor ? () => load(cursor) : undefined}
        >
          {entries.map((e) => (
            <tr key={e.key}>
              <th scope="row">
                <code>{e.key}</code>
              </th>
              <td>
                <code className="clip">{JSON.stringify(e.value)}</code>
              </td>
              <td title={e.expiresAt ? formatTime(e.expiresAt) : undefined}>
                {e.expiresAt ? formatTime(e.expiresAt) : <span className="muted">Never</span>}
              </td>
              <td title={formatTime(e.updatedAt)}>{formatAgo(e.updatedAt)}</td>
              <td className="actions-cell">
                <RowAction
                  action="Edit"
                  row={e.key}
                  onClick={() =>
                    setEditing({ key: e.key, json: JSON.stringify(e.value, null, 2), ttl: '', isNew: false })
                  }
                />
                <RowAction action="Delete" row={e.key} danger onClick={() => setDeleting(e)} />
              </td>
            </tr>
          ))}
        </ListTable>
      )}

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete "${deleting?.key ?? ''}"?`}
        confirmLabel="Delete"
        danger
        busy={removal.busy}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      >
        <p>Steps that read this key find nothing from now on.</p>
      </ConfirmDialog>
    </section>
  );
}
