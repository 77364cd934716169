import { type FormEvent, useId, useState } from 'react';
import { type ApiError, api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { formatAgo, formatTime } from '../lib/format';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import { usePagedList } from '../lib/usePagedList';
import { useCan, useRole } from '../lib/role';
import { ROLES, atLeast } from '../../../src/shared/roles';
import type { Role } from '../types';

interface ApiToken {
  id: string;
  name: string;
  prefix: string;
  role: Role;
  createdAt: string;
  lastUsedAt: string | null;
}

/**
 * API tokens (SPEC 8): what scripts and the CLI send as `Authorization: Bearer …`. A new token is
 * shown once, right after it is created (only its hash is stored); the list shows its first
 * characters so a token in a script can be recognised, and revoking one locks its users out at once.
 */
export function TokenList() {
  useTitle('API tokens');
  const id = useId();
  const [error, setError] = useState<ApiError | null>(null);
  const {
    items: tokens,
    setItems: setTokens,
    hasMore,
    more,
  } = usePagedList<ApiToken>('/tokens', 50, setError);
  const [name, setName] = useState('');
  const myRole = useRole();
  const canCreate = useCan('editor');
  const [role, setRole] = useState<Role>(myRole);
  const creation = useAction(setError);
  const [created, setCreated] = useState<{ id: string; name: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const revocation = useAction(setError);
  const [notice, setNotice] = useState<string | null>(null);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setNotice(null);
    await creation.run(async () => {
      const { token, ...row } = await api<ApiToken & { token: string }>('POST', '/tokens', {
        name: name.trim(),
        role,
      });
      setTokens((list) => [row, ...(list ?? [])]);
      setCreated({ id: row.id, name: row.name, token });
      setName('');
    });
  };

  const revoke = async () => {
    if (!revoking) return;
    const t = revoking;
    await revocation.run(async () => {
      await api('DELETE', `/tokens/${encodeURIComponent(t.id)}`);
      setTokens((list) => list?.filter((x) => x.id !== t.id) ?? null);
      if (created?.id === t.id) setCreated(null);
      setNotice(`Revoked "${t.name}": requests with it are refused from now on.`);
    });
    setRevoking(null);
  };

  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>API tokens</h1>
      </div>
      <p className="muted">
        Scripts, CI jobs and the <code>hookflow</code> CLI call the API with a token:{' '}
        <code>Authorization: Bearer &lt;token&gt;</code>. Give each user of the API its own, so you can revoke
        one without breaking the others.
      </p>

      {canCreate && (
        <form className="card inline-form" onSubmit={create}>
          <label htmlFor={`${id}-name`} className="label">
            Name of the new token
          </label>
          <div className="row">
            <input
              id={`${id}-name`}
              className="input grow"
              value={name}
              maxLength={128}
              required
              onChange={(e) => setName(e.target.value)}
              placeholder="deploy script"
            />
            <label htmlFor={`${id}-role`} className="visually-hidden">
              Role of the new token
            </label>
            <select
              id={`${id}-role`}
              className="input"
              value={role}
              onChange={(e) => setRole(e.target.value as Role)}
            >
              {ROLES.filter((r) => atLeast(myRole, r)).map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            <button type="submit" className="button primary" disabled={creation.busy || name.trim() === ''}>
              Create token
            </button>
          </div>
          <p className="help">A token acts with the role chosen, never above yours.</p>
        </form>
      )}

      {created && (
        <div className="card" role="status">
          <h2>Token "{created.name}" created</h2>
          <p>Copy it now: it is shown only this once (hookflow keeps only its hash).</p>
          <div className="row">
            <code className="grow" data-testid="new-token">
              {created.token}
            </code>
            <CopyButton text={created.token} label="Copy token" />
          </div>
          <button type="button" className="button small" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}

      <Notice text={notice} />
      <ErrorMessage error={error} />

      {tokens === null && !error && <p className="muted">Loading tokens…</p>}
      {tokens !== null && tokens.length === 0 && (
        <p className="muted">No API tokens yet. The UI itself needs none: it uses your sign-in.</p>
      )}
      {tokens !== null && tokens.length > 0 && (
        <ListTable
          caption="API tokens"
          columns={['Name', 'Starts with', 'Role', 'Created', 'Last used']}
          onMore={hasMore ? more : undefined}
        >
          {tokens.map((t) => (
            <tr key={t.id}>
              <th scope="row">{t.name}</th>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>{t.role}</td>
              <td title={formatTime(t.createdAt)}>{formatAgo(t.createdAt)}</td>
              <td title={t.lastUsedAt ? formatTime(t.lastUsedAt) : undefined}>
                {t.lastUsedAt ? formatAgo(t.lastUsedAt) : <span className="muted">Never</span>}
              </td>
              <td className="actions-cell">
                {canCreate && (
                  <RowAction action="Revoke" row={t.name} danger onClick={() => setRevoking(t)} />
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}

      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke "${revoking?.name ?? ''}"?`}
        confirmLabel="Revoke"
        danger
        busy={revocation.busy}
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      >
        <p>Every script or job that uses this token gets 401 from now on. This cannot be undone.</p>
      </ConfirmDialog>
    </section>
  );
}
