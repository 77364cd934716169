import { type FormEvent, useEffect, useId, useMemo, useRef, useState } from 'react';
import { type ApiError, api, asApiError } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { StatusBadge } from '../components/StatusBadge';
import { Switch } from '../components/Switch';
import { MASK } from '../lib/draft';
import { formatAgo, formatTime } from '../lib/format';
import { describeCron } from '../lib/schedule';
import { lastExecution, listAllWorkflows, setActive, triggerInput } from '../lib/workflows';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import { Link, navigate } from '../router';
import type { Execution, Workflow } from '../types';
import { useCan } from '../lib/role';

export function WorkflowList() {
  const canEdit = useCan('editor');
  useTitle('Workflows');
  const id = useId();
  const [workflows, setWorkflows] = useState<Workflow[] | null>(null);
  const [last, setLast] = useState<Record<string, Execution | null>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [rowErrors, setRowErrors] = useState<Record<string, ApiError>>({});
  // Toggling, duplicating and deleting run for one row; its controls are disabled meanwhile.
  const rowAction = useAction(setError);
  const [search, setSearch] = useState('');
  const [creating, setCreating] = useState(false);
  const [newName, setNewName] = useState('');
  const [deleting, setDeleting] = useState<Workflow | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const nameRef = useRef<HTMLInputElement>(null);
  // After a delete, its row (and the button that opened the dialog) is gone: focus goes to the page
  // heading, under which the notice says what happened, not to <body>. In an effect,
  // so it comes after the dialog's own (a child's effects run first), which closes it and hands
  // focus back to the removed button.
  const focusHeading = useRef(false);
  useEffect(() => {
    if (deleting !== null || !focusHeading.current) return;
    focusHeading.current = false;
    document.getElementById(`${id}-title`)?.focus();
  });

  // Opening the form moves focus to its one field.
  useEffect(() => {
    if (creating) nameRef.current?.focus();
  }, [creating]);

  const load = async () => {
    try {
      const items = await listAllWorkflows();
      setWorkflows(items);
      setError(null);
      const entries = await Promise.all(
        items.map(async (w) => [w.id, (await lastExecution(w.id).catch(() => undefined)) ?? null] as const),
      );
      setLast(Object.fromEntries(entries));
    } catch (err) {
      setError(asApiError(err));
    }
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: the list loads once on mount; later loads are explicit
  useEffect(() => {
    load();
  }, []);

  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    if (!workflows || !q) return workflows ?? [];
    return workflows.filter(
      (w) =>
        w.name.toLowerCase().includes(q) ||
        (w.trigger.path ?? '').toLowerCase().includes(q) ||
        (w.trigger.cron ?? '').toLowerCase().includes(q) ||
        (w.trigger.methods ?? []).join(' ').toLowerCase().includes(q),
    );
  }, [workflows, search]);

  const replace = (w: Workflow) => setWorkflows((list) => list?.map((x) => (x.id === w.id ? w : x)) ?? null);

  const toggle = async (w: Workflow, active: boolean) => {
    setRowErrors(({ [w.id]: _, ...rest }) => rest);
    await rowAction.run(async () => replace(await setActive(w.id, active)), {
      key: w.id,
      onError: (err) => setRowErrors((errs) => ({ ...errs, [w.id]: err })),
    });
  };

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const w = await api<Workflow>('POST', '/workflows', { name: newName.trim() || 'Untitled workflow' });
      navigate(`/workflows/${w.id}`);
    } catch (err) {
      setError(asApiError(err));
    }
  };

  const duplicate = async (w: Workflow) => {
    setError(null);
    await rowAction.run(
      async () => {
        const trigger = triggerInput(w);
        // Secrets never reach the browser, so a copy cannot carry them: its auth starts empty.
        const hasSecret = Object.values(trigger.auth ?? {}).includes(MASK);
        const { path: _path, ...rest } = trigger;
        const copy = await api<Workflow>('POST', '/workflows', {
          name: `Copy of ${w.name}`,
          // A new random path: two workflows on one path could never both be active.
          trigger: hasSecret ? { ...rest, auth: { type: 'none' } } : rest,
          steps: w.steps,
        });
        setWorkflows((list) => (list ? [copy, ...list] : [copy]));
        setNotice(
          copy.trigger.type === 'schedule'
            ? `Created "${copy.name}", not active: activate it to start its schedule.`
            : `Created "${copy.name}" on a new path.${hasSecret ? ' Its webhook authentication was reset: set the secret again in the editor.' : ''}`,
        );
      },
      { key: w.id },
    );
  };

  const remove = async () => {
    if (!deleting) return;
    const w = deleting;
    await rowAction.run(
      async () => {
        await api('DELETE', `/workflows/${encodeURIComponent(w.id)}`);
        setWorkflows((list) => list?.filter((x) => x.id !== w.id) ?? null);
        setNotice(`Deleted "${w.name}".`);
        focusHeading.current = true;
      },
      { key: w.id },
    );
    setDeleting(null);
  };

  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`} tabIndex={-1}>
          Workflows
        </h1>
        <div className="page-actions">
          <div className="search">
            <label htmlFor={`${id}-search`} className="visually-hidden">
              Search workflows
            </label>
            <input
              id={`${id}-search`}
              type="search"
              className="input"
              placeholder="Search workflows"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
            />
          </div>
          {canEdit && (
            <button
              type="button"
              className="button primary"
              onClick={() => setCreating((c) => !c)}
              aria-expanded={creating}
            >
              New workflow
            </button>
          )}
        </div>
      </div>

      {creating && (
        <form className="card inline-form" onSubmit={create}>
          <label htmlFor={`${id}-name`} className="label">
            Name of the new workflow
          </label>
          <div className="row">
            <input
              id={`${id}-name`}
              className="input grow"
              value={newName}
              onChange={(e) => setNewName(e.target.value)}
              placeholder="New orders"
              ref={nameRef}
            />
            <button type="submit" className="button primary">
              Create
            </button>
          </div>
          <p className="help">
            It starts with a webhook trigger on POST and a random path; change both, or choose a schedule, in
            the editor.
          </p>
        </form>
      )}

      <Notice text={notice} />
      <ErrorMessage error={error} />

      {workflows === null && !error && <p className="muted">Loading workflows…</p>}
      {workflows !== null && workflows.length === 0 && (
        <div className="card empty">
          <h2>No workflows yet</h2>
          <p>
            A workflow starts with a webhook: hookflow gives it a URL, other applications call it, and the
            data they send flows through the workflow's steps. Create one to get its URL.
          </p>
          {canEdit && (
            <button type="button" className="button primary" onClick={() => setCreating(true)}>
              Create your first workflow
            </button>
          )}
        </div>
      )}
      {workflows !== null && workflows.length > 0 && (
        <ListTable
          caption="Workflows"
          columns={['Name', 'Active', 'Trigger', 'Last execution']}
          className="workflow-table"
          footer={shown.length === 0 && <p className="muted">No workflow matches "{search}".</p>}
        >
          {shown.map((w) => {
            const exec = last[w.id];
            const rowError = rowErrors[w.id];
            return (
              <tr key={w.id}>
                <th scope="row">
                  <Link to={`/workflows/${w.id}`} className="strong-link">
                    {w.name}
                  </Link>
                  <div className="muted small">
                    {w.active ? 'Active' : 'Not activated: only the test URL serves'}
                  </div>
                  {rowError && (
                    <div className="row-error" id={`${id}-err-${w.id}`}>
                      <ErrorMessage error={rowError} />
                    </div>
                  )}
                </th>
                <td>
                  {canEdit ? (
                    <Switch
                      checked={w.active}
                      label={`Active: ${w.name}`}
                      disabled={rowAction.busyKey === w.id}
                      describedBy={rowError ? `${id}-err-${w.id}` : undefined}
                      onChange={(next) => toggle(w, next)}
                    />
                  ) : (
                    <span className="muted small">{w.active ? 'Yes' : 'No'}</span>
                  )}
                </td>
                <td>
                  {scheduleOf(w) ? (
                    <>
                      <span className="methods">Schedule</span> <code>{scheduleOf(w)!.cron}</code>
                      <span className="muted small">
                        {' '}
                        · {describeCron(scheduleOf(w)!.cron)}
                        {scheduleOf(w)!.nextRunAt && <> · next {formatTime(scheduleOf(w)!.nextRunAt!)}</>}
                      </span>
                    </>
                  ) : (
                    <>
                      <span className="methods">{w.trigger.methods.join(', ')}</span>{' '}
                      <code>/{w.trigger.path}</code>
                    </>
                  )}
                </td>
                <td>
                  {exec === undefined ? (
                    <span className="muted">…</span>
                  ) : exec === null ? (
                    <span className="muted small">Never run</span>
                  ) : (
                    <Link
                      to={`/executions/${exec.id}`}
                      className="last-exec"
                      title={formatTime(exec.createdAt)}
                    >
                      <StatusBadge status={exec.status} />{' '}
                      <span className="muted small">
                        {exec.mode === 'test' ? 'test · ' : ''}
                        {formatAgo(exec.createdAt)}
                      </span>
                    </Link>
                  )}
                </td>
                <td className="actions-cell">
                  <RowAction
                    action="Duplicate"
                    row={w.name}
                    disabled={rowAction.busyKey === w.id}
                    onClick={() => duplicate(w)}
                  />
                  <RowAction
                    action="Delete"
                    row={w.name}
                    danger
                    disabled={rowAction.busyKey === w.id}
                    onClick={() => setDeleting(w)}
                  />
                </td>
              </tr>
            );
          })}
        </ListTable>
      )}

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete "${deleting?.name ?? ''}"?`}
        confirmLabel="Delete workflow"
        danger
        busy={rowAction.busy}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      >
        <p>
          Its webhook URLs stop answering at once
          {deleting?.active ? ' (it is active: live traffic will get 404)' : ''}. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** A schedule trigger (SPEC 7f) as the API shows it. */
function scheduleOf(w: Workflow): { cron: string; nextRunAt: string | null } | undefined {
  const t = w.trigger;
  return t.type === 'schedule' && t.cron ? { cron: t.cron, nextRunAt: t.nextRunAt ?? null } : undefined;
}
