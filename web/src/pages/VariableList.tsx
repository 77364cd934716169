import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { type ApiError, api, asApiError } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { formatAgo, formatTime } from '../lib/format';
import { useCan } from '../lib/role';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import { type Variable, variableReference } from '../lib/variables';
import {
  VARIABLE_NAME_MAX_CHARS,
  VARIABLE_VALUE_MAX_CHARS,
  variableNameProblem,
} from '../../../src/shared/variables';

/** What the server shows (and takes back, to keep it) in place of a secret's value. */
const MASK = '***';

interface Editing {
  name: string;
  value: string;
  secret: boolean;
  /** The variable as stored; undefined for a new one. */
  old: Variable | undefined;
}

/**
 * Variables (SPEC 7e): named values every workflow reads as `$vars.NAME` (a base URL, a channel),
 * and secrets (a Slack incoming-webhook URL, an API key) sealed at rest, shown as "***" and usable
 * only as `$secrets.NAME` in the fields that send them. A secret's value is never put back into
 * an input: editing one leaves the value empty, and empty keeps it.
 */
export function VariableListPage() {
  useTitle('Variables');
  const id = useId();
  const canEdit = useCan('editor');
  const [items, setItems] = useState<Variable[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [nameError, setNameError] = useState<string | null>(null);
  const [valueError, setValueError] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Variable | null>(null);
  const saving = useAction(setError);
  const removal = useAction(setError);
  const nameRef = useRef<HTMLInputElement>(null);
  const valueRef = useRef<HTMLTextAreaElement>(null);

  const load = useCallback(async () => {
    try {
      setItems((await api<{ items: Variable[] }>('GET', '/variables')).items);
    } catch (err) {
      setError(asApiError(err));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  const open = (next: Editing) => {
    setEditing(next);
    setNameError(null);
    setValueError(null);
    setNotice(null);
  };

  // The form opens above the list: take the person to it.
  const openedFor = editing ? (editing.old?.name ?? '') : null;
  useEffect(() => {
    if (openedFor === null) return;
    (openedFor === '' ? nameRef.current : valueRef.current)?.focus();
  }, [openedFor]);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    setError(null);
    setNotice(null);
    const name = editing.name.trim();
    const problem = editing.old ? undefined : variableNameProblem(name);
    setNameError(problem ? `The name ${problem}.` : null);
    // A secret kept secret keeps its value when none is typed; anything else needs one.
    const keep = editing.old?.secret === true && editing.secret && editing.value === '';
    const missing =
      editing.value === '' && !keep && editing.old?.secret === true
        ? 'Type the value: a secret made plain does not show its old value.'
        : null;
    setValueError(missing);
    if (problem) return nameRef.current?.focus();
    if (missing) return valueRef.current?.focus();
    await saving.run(async () => {
      await api('PUT', `/variables/${encodeURIComponent(name)}`, {
        value: keep ? MASK : editing.value,
        secret: editing.secret,
      });
      setNotice(
        `Saved ${name}. Use it as ${variableReference({ name, secret: editing.secret })}${
          editing.secret ? ' in an HTTP request, email or SQL query step' : ''
        }.`,
      );
      setEditing(null);
      await load();
    });
  };

  const remove = async () => {
    if (!deleting) return;
    const variable = deleting;
    await removal.run(async () => {
      await api('DELETE', `/variables/${encodeURIComponent(variable.name)}`);
      setItems((list) => list?.filter((v) => v.name !== variable.name) ?? null);
      setNotice(`Deleted ${variable.name}.`);
    });
    setDeleting(null);
  };

  const secretWas = editing?.old?.secret === true;
  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>Variables</h1>
        {canEdit && (
          <button
            type="button"
            className="button primary"
            onClick={() => open({ name: '', value: '', secret: false, old: undefined })}
          >
            Add variable
          </button>
        )}
      </div>
      <p className="muted">
        Values every workflow shares, set once here instead of in each step: read one in any expression as{' '}
        <code>{'{{ $vars.NAME }}'}</code>. A secret one is encrypted, shows as <code>***</code> everywhere,
        and is read as <code>{'{{ $secrets.NAME }}'}</code> only where it is sent: an HTTP request's URL,
        headers, query and body, an email's fields, an SQL query's parameters.
      </p>

      {editing && (
        <form
          className="card"
          onSubmit={save}
          noValidate
          aria-label={editing.old ? `Edit ${editing.old.name}` : 'New variable'}
        >
          <div className="field">
            <label htmlFor={`${id}-name`} className="label">
              Name
            </label>
            <input
              ref={nameRef}
              id={`${id}-name`}
              className={`input mono${nameError ? ' invalid' : ''}`}
              value={editing.name}
              readOnly={editing.old !== undefined}
              maxLength={VARIABLE_NAME_MAX_CHARS}
              placeholder="SLACK_WEBHOOK_URL"
              autoComplete="off"
              spellCheck={false}
              aria-invalid={nameError ? true : undefined}
              aria-describedby={`${id}-name-help${nameError ? ` ${id}-name-error` : ''}`}
              onChange={(e) => setEditing({ ...editing, name: e.target.value })}
            />
            {nameError && (
              <p id={`${id}-name-error`} className="field-error">
                {nameError}
              </p>
            )}
            <p id={`${id}-name-help`} className="help">
              Capital letters, digits and _, not starting with a digit.
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${id}-value`} className="label">
              Value
            </label>
            <textarea
              ref={valueRef}
              id={`${id}-value`}
              className={`input mono${valueError ? ' invalid' : ''}`}
              rows={3}
              value={editing.value}
              maxLength={VARIABLE_VALUE_MAX_CHARS}
              placeholder={secretWas ? 'Empty: keep the current value' : undefined}
              autoComplete="off"
              spellCheck={false}
              aria-invalid={valueError ? true : undefined}
              aria-describedby={
                [secretWas ? `${id}-value-help` : '', valueError ? `${id}-value-error` : '']
                  .filter(Boolean)
                  .join(' ') || undefined
              }
              onChange={(e) => setEditing({ ...editing, value: e.target.value })}
            />
            {valueError && (
              <p id={`${id}-value-error`} className="field-error">
                {valueError}
              </p>
            )}
            {secretWas && (
              <p id={`${id}-value-help`} className="help">
                The secret's value is not shown. Type a new one to replace it, or leave this empty to keep it.
              </p>
            )}
          </div>
          <label className="check">
            <input
              type="checkbox"
              checked={editing.secret}
              aria-describedby={`${id}-secret-help`}
              onChange={(e) => setEditing({ ...editing, secret: e.target.checked })}
            />
            Secret
          </label>
          <p id={`${id}-secret-help`} className="help">
            Encrypted, never shown again, and usable only as <code>$secrets.NAME</code> in the fields that
            send it (a Slack incoming-webhook URL, an API key).
          </p>
          <div className="row">
            <button type="submit" className="button primary" disabled={saving.busy}>
              {saving.busy ? 'Saving…' : 'Save'}
            </button>
            <button type="button" className="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}

      <Notice text={notice} />
      <ErrorMessage error={error} />

      {items === null && !error && <p className="muted">Loading variables…</p>}
      {items !== null && items.length === 0 && (
        <div className="card empty">
          <h2>No variables yet</h2>
          <p>
            A variable keeps a value out of your workflows: a base URL, a channel name, an account id. Change
            it here and every workflow that reads <code>{'{{ $vars.API_URL }}'}</code> uses the new value on
            its next run.
          </p>
          <p>
            Make it secret for what must not be seen — an API key, or a Slack incoming-webhook URL, which is
            its own password — and send it with <code>{'{{ $secrets.SLACK_WEBHOOK_URL }}'}</code> in an HTTP
            request's URL, headers, query or body, an email's fields or an SQL query's parameters. Executions,
            logs and exports show it as <code>***</code>.
          </p>
        </div>
      )}
      {items !== null && items.length > 0 && (
        <ListTable caption="Variables" columns={['Name', 'Value', 'Use as', 'Changed']} actions={canEdit}>
          {items.map((v) => (
            <tr key={v.name}>
              <th scope="row">
                <code>{v.name}</code>
                {v.secret && <span className="badge badge-secret">secret</span>}
              </th>
              <td>
                {v.secret ? (
                  <>
                    <code aria-hidden="true">{MASK}</code>
                    <span className="visually-hidden">hidden</span>
                  </>
                ) : (
                  <code className="variable-value">{v.value}</code>
                )}
              </td>
              <td>
                <code className="small">{variableReference(v)}</code>
              </td>
              <td title={formatTime(v.updatedAt)}>{formatAgo(v.updatedAt)}</td>
              {canEdit && (
                <td className="actions-cell">
                  <RowAction
                    action="Edit"
                    row={v.name}
                    onClick={() =>
                      open({ name: v.name, value: v.secret ? '' : v.value, secret: v.secret, old: v })
                    }
                  />
                  <RowAction action="Delete" row={v.name} danger onClick={() => setDeleting(v)} />
                </td>
              )}
            </tr>
          ))}
        </ListTable>
      )}

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? ''}?`}
        confirmLabel="Delete"
        danger
        busy={removal.busy}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      >
        <p>
          Expressions that read{' '}
          <code>{deleting ? variableReference(deleting).replace(/^\{\{ | \}\}$/g, '') : ''}</code> find
          nothing from the next run on.
        </p>
      </ConfirmDialog>
    </section>
  );
}
