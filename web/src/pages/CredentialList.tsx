import { type FormEvent, useId, useState } from 'react';
import { type ApiError, api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import {
  CREDENTIAL_TYPES,
  type Credential,
  type CredentialType,
  credentialData,
  credentialType,
  type OAuth2Status,
  oauth2CallbackUrl,
} from '../lib/credentials';
import { formatAgo, formatTime } from '../lib/format';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import { usePagedList } from '../lib/usePagedList';

/** The type-specific fields of a credential form; values are typed in, never shown back. */
function DataFields({
  type,
  values,
  onChange,
  rotating,
}: {
  type: CredentialType;
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
  rotating?: boolean;
}) {
  return (
    <>
      {credentialType(type)?.fields.map((f) =>
        f.choices ? (
          <ChoiceField
            key={f.key}
            label={rotating ? `New ${f.label.toLowerCase()}` : f.label}
            choices={f.choices}
            value={values[f.key] ?? ''}
            keep={rotating === true}
            onChange={(v) => onChange({ ...values, [f.key]: v })}
          />
        ) : (
          <TextField
            key={f.key}
            label={rotating ? `New ${f.label.toLowerCase()}` : f.label}
            className="input mono"
            type={f.secret ? 'password' : 'text'}
            autoComplete={f.secret ? 'new-password' : 'off'}
            spellCheck={false}
            value={values[f.key] ?? ''}
            placeholder={rotating ? 'Leave blank to keep the stored value' : f.placeholder}
            help={f.help ?? (f.optional && !rotating ? 'Optional.' : undefined)}
            onChange={(e) => onChange({ ...values, [f.key]: e.target.value })}
          />
        ),
      )}
    </>
  );
}

/** A field picked from a few values (a database's TLS); rotating, "Keep" leaves it as stored. */
function ChoiceField({
  label,
  choices,
  value,
  keep,
  onChange,
}: {
  label: string;
  choices: [string | boolean, string][];
  value: string;
  keep: boolean;
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id} className="label">
        {label}
      </label>
      <select id={id} className="input" value={value} onChange={(e) => onChange(e.target.value)}>
        {keep && <option value="">Keep the stored value</option>}
        {choices.map(([v, text]) => (
          <option key={String(v)} value={String(v)}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** An OAuth2 credential's state, in words (never a token: the API has none to give). */
function OAuth2State({ status }: { status: OAuth2Status }) {
  if (status.state === 'needs_reconnect')
    return (
      <span className="small">
        <strong>Needs reconnecting</strong>
        {status.lastError ? `: ${status.lastError}` : ''}
      </span>
    );
  if (status.state === 'not_connected')
    return (
      <span className="small muted">
        Not connected{status.lastError ? ` (last try: ${status.lastError})` : ''}
      </span>
    );
  return (
    <span className="small">
      Connected
      {status.expiresAt ? (
        <span className="muted" title={formatTime(status.expiresAt)}>
          {' '}
          · token renewed {status.refreshedAt ? formatAgo(status.refreshedAt) : ''}
        </span>
      ) : null}
    </span>
  );
}

/**
 * Credentials (SPEC 7c): the secrets of outbound calls, referenced by id from http steps. Values are
 * write-only: typed when creating or rotating, stored encrypted, never shown again.
 */
export function CredentialList() {
  useTitle('Credentials');
  const id = useId();
  const [error, setError] = useState<ApiError | null>(null);
  const { items, setItems, hasMore, more } = usePagedList<Credential>('/credentials', 100, setError);
  const [notice, setNotice] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [type, setType] = useState<CredentialType>('bearer');
  const [values, setValues] = useState<Record<string, string>>({});
  const creation = useAction(setError);
  const [rotating, setRotating] = useState<{ credential: Credential; values: Record<string, string> } | null>(
    null,
  );
  const [deleting, setDeleting] = useState<Credential | null>(null);
  const [deleteError, setDeleteError] = useState<ApiError | null>(null);
  // Rotating and deleting happen in a dialog, one at a time.
  const change = useAction(setError);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setNotice(null);
    const { data, missing } = credentialData(type, values, false);
    if (missing.length > 0) {
      setNotice(`Fill in: ${missing.join(', ')}.`);
      return;
    }
    await creation.run(async () => {
      const c = await api<Credential>('POST', '/credentials', { name: name.trim(), type, data });
      setItems((list) => [c, ...(list ?? [])]);
      setName('');
      setValues({});
      setNotice(
        `Created "${c.name}". Choose it in ${c.type === 'postgres' || c.type === 'mysql' ? 'an SQL query' : 'an HTTP request'} step's Credential field.`,
      );
    });
  };

  const rotate = async () => {
    if (!rotating) return;
    const { credential, values: next } = rotating;
    const { data } = credentialData(credential.type, next, true);
    if (Object.keys(data).length === 0) {
      setRotating(null);
      return;
    }
    await change.run(async () => {
      const c = await api<Credential>('PATCH', `/credentials/${encodeURIComponent(credential.id)}`, { data });
      setItems((list) => list?.map((x) => (x.id === c.id ? c : x)) ?? null);
      setNotice(`Rotated "${c.name}": every workflow using it sends the new value from its next run.`);
    });
    setRotating(null);
  };

  /**
   * Connect (authorization code): the provider's page opens in a new tab, where the person signs
   * in; its callback page says when it is done. The tab is opened at the click (a pop-up opened
   * after a request would be blocked), and the list is read again when this tab is back in focus.
   */
  const connect = async (c: Credential) => {
    setError(null);
    setNotice(null);
    const tab = window.open('', '_blank');
    await change.run(
      async () => {
        const { authorizeUrl } = await api<{ authorizeUrl: string }>(
          'POST',
          `/credentials/${encodeURIComponent(c.id)}/oauth2/authorize`,
        );
        if (tab) {
          // The provider's page gets no handle on this one (it could navigate it elsewhere).
          tab.opener = null;
          tab.location.href = authorizeUrl;
        } else window.location.assign(authorizeUrl);
        setNotice(
          `Sign in with the provider in the new tab to connect "${c.name}"; this list updates when you come back.`,
        );
        const refresh = async () => {
          window.removeEventListener('focus', refresh);
          const fresh = await api<Credential>('GET', `/credentials/${encodeURIComponent(c.id)}`);
          setItems((list) => list?.map((x) => (x.id === fresh.id ? fresh : x)) ?? null);
        };
        window.addEventListener('focus', refresh);
      },
      {
        onError: (err) => {
          tab?.close();
          setError(err);
        },
      },
    );
  };

  const remove = async () => {
    if (!deleting) return;
    const c = deleting;
    setDeleteError(null);
    await change.run(
      async () => {
        await api('DELETE', `/credentials/${encodeURIComponent(c.id)}`);
        setItems((list) => list?.filter((x) => x.id !== c.id) ?? null);
        setNotice(`Deleted "${c.name}".`);
        setDeleting(null);
      },
      // 409 credential_in_use: said in the dialog, which names the workflows using it.
      { onError: setDeleteError },
    );
  };

  const kind = credentialType(type)!;
  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>Credentials</h1>
      </div>
      <p className="muted">
        The secrets HTTP request and SQL query steps use — tokens, API keys, database passwords — kept here,
        encrypted, instead of in a workflow. A step names a credential; its value is added when the step runs
        and shows as <code>***</code> in executions and exports. Values cannot be read back: rotate one to
        change it.
      </p>

      <form className="card" onSubmit={create} aria-labelledby={`${id}-new`}>
        <h2 id={`${id}-new`}>New credential</h2>
        <TextField
          label="Name"
          value={name}
          maxLength={256}
          required
          placeholder="Stripe live key"
          onChange={(e) => setName(e.target.value)}
        />
        <div className="field">
          <label htmlFor={`${id}-type`} className="label">
            Type
          </label>
          <select
            id={`${id}-type`}
            className="input"
            value={type}
            aria-describedby={`${id}-type-help`}
            onChange={(e) => {
              setType(e.target.value as CredentialType);
              setValues({});
            }}
          >
            {CREDENTIAL_TYPES.map((t) => (
              <option key={t.type} value={t.type}>
                {t.label}
              </option>
            ))}
          </select>
          <p id={`${id}-type-help`} className="help">
            {kind.help}
          </p>
          {type === 'oauth2' && (
            <p className="help">
              Register this redirect URL with the provider: <code>{oauth2CallbackUrl()}</code>
            </p>
          )}
        </div>
        <DataFields type={type} values={values} onChange={setValues} />
        <button type="submit" className="button primary" disabled={creation.busy || name.trim() === ''}>
          {creation.busy ? 'Creating…' : 'Create credential'}
        </button>
      </form>

      <Notice text={notice} />
      <ErrorMessage error={error} />

      {items === null && !error && <p className="muted">Loading credentials…</p>}
      {items !== null && items.length === 0 && <p className="muted">No credentials yet.</p>}
      {items !== null && items.length > 0 && (
        <ListTable
          caption="Credentials"
          columns={['Name', 'Type', 'Holds', 'Changed']}
          onMore={hasMore ? more : undefined}
        >
          {items.map((c) => (
            <tr key={c.id}>
              <th scope="row">
                {c.name}
                <br />
                <code className="small muted">{c.id}</code>
              </th>
              <td>
                {credentialType(c.type)?.label ?? c.type}
                {c.oauth2 && (
                  <>
                    <br />
                    <OAuth2State status={c.oauth2} />
                  </>
                )}
              </td>
              <td>
                {Object.keys(c.data).map((k) => (
                  <code key={k} className="small">
                    {k}: ***{' '}
                  </code>
                ))}
              </td>
              <td title={formatTime(c.updatedAt)}>{formatAgo(c.updatedAt)}</td>
              <td className="actions-cell">
                {c.oauth2 && 'authorizationUrl' in c.data && (
                  <>
                    <RowAction
                      action={c.oauth2.state === 'not_connected' ? 'Connect' : 'Reconnect'}
                      row={c.name}
                      onClick={() => void connect(c)}
                    />{' '}
                  </>
                )}
                <RowAction
                  action="Rotate"
                  row={c.name}
                  onClick={() => setRotating({ credential: c, values: {} })}
                />{' '}
                <RowAction
                  action="Delete"
                  row={c.name}
                  danger
                  onClick={() => {
                    setDeleteError(null);
                    setDeleting(c);
                  }}
                />
              </td>
            </tr>
          ))}
        </ListTable>
      )}

      <ConfirmDialog
        open={rotating !== null}
        title={`Rotate "${rotating?.credential.name ?? ''}"`}
        confirmLabel="Save new values"
        busy={change.busy}
        onConfirm={rotate}
        onCancel={() => setRotating(null)}
      >
        <p>Type the new values; a blank field keeps the stored one.</p>
        {rotating && (
          <DataFields
            type={rotating.credential.type}
            values={rotating.values}
            rotating
            onChange={(v) => setRotating({ ...rotating, values: v })}
          />
        )}
      </ConfirmDialog>

      <ConfirmDialog
        open={deleting !== null}
        title={`Delete "${deleting?.name ?? ''}"?`}
        confirmLabel="Delete"
        danger
        busy={change.busy}
        onConfirm={remove}
        onCancel={() => {
          setDeleting(null);
          setDeleteError(null);
        }}
      >
        <p>HTTP request steps can no longer use it. This cannot be undone.</p>
        <ErrorMessage
          error={deleteError}
          title={deleteError?.code === 'credential_in_use' ? 'Still in use: not deleted' : 'Not deleted'}
        />
      </ConfirmDialog>
    </section>
  );
}
