import { type FormEvent, useCallback, useEffect, useId, useState } from 'react';
import { type ApiError, api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { formatAgo, formatTime } from '../lib/format';
import { useRole } from '../lib/role';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import type { Invitation, Member, Role, User } from '../types';

const ASSIGNABLE: Exclude<Role, 'owner'>[] = ['viewer', 'editor', 'admin'];
const ROLE_HELP: Record<Role, string> = {
  viewer: 'reads workflows and executions',
  editor: 'also edits, publishes, tests; credentials',
  admin: 'also manages members',
  owner: 'everything; hands ownership on',
};

/**
 * Members (SPEC 11b), for admins and the owner: who is in, with which role; invitations by link
 * (shown once to copy, one use, 7 days), pending ones revocable; role changes and removals, which
 * take effect on the member's sessions and tokens at once. Only the owner hands ownership on.
 */
/** Whether the invitation was mailed (the server has HOOKFLOW_MAILER_CREDENTIAL set). */
interface InviteMail {
  sent: boolean;
  to: string;
  error?: string;
}

export function MemberList({ me }: { me: User }) {
  useTitle('Members');
  const id = useId();
  const role = useRole();
  const [error, setError] = useState<ApiError | null>(null);
  const [members, setMembers] = useState<Member[] | null>(null);
  const [invitations, setInvitations] = useState<Invitation[] | null>(null);
  const [email, setEmail] = useState('');
  const [inviteRole, setInviteRole] = useState<Exclude<Role, 'owner'>>('editor');
  const [invited, setInvited] = useState<{ email: string; inviteUrl: string; mail?: InviteMail } | null>(
    null,
  );
  const [removing, setRemoving] = useState<Member | null>(null);
  const [transferring, setTransferring] = useState<Member | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction(setError);

  const load = useCallback(async () => {
    try {
      const [m, i] = await Promise.all([
        api<{ items: Member[] }>('GET', '/members'),
        api<{ items: Invitation[] }>('GET', '/members/invitations'),
      ]);
      setMembers(m.items);
      setInvitations(i.items);
    } catch (err) {
      setError(err as ApiError);
    }
  }, []);
  useEffect(() => {
    load();
  }, [load]);

  const invite = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setNotice(null);
    await action.run(async () => {
      const res = await api<{ id: string; inviteUrl: string; expiresAt: string; mail?: InviteMail }>(
        'POST',
        '/members/invitations',
        {
          email: email.trim(),
          role: inviteRole,
        },
      );
      setInvited({ email: email.trim(), inviteUrl: res.inviteUrl, ...(res.mail ? { mail: res.mail } : {}) });
      setEmail('');
      await load();
    });
  };

  const changeRole = (m: Member, next: Exclude<Role, 'owner'>) =>
    action.run(
      async () => {
        const updated = await api<Member>('PATCH', `/members/${encodeURIComponent(m.id)}`, { role: next });
        setMembers((list) => list?.map((x) => (x.id === m.id ? updated : x)) ?? null);
        setNotice(`${m.email} is now ${next}.`);
      },
      { key: m.id },
    );

  const remove = async () => {
    const m = removing;
    if (!m) return;
    await action.run(async () => {
      await api('DELETE', `/members/${encodeURIComponent(m.id)}`);
      setMembers((list) => list?.filter((x) => x.id !== m.id) ?? null);
      setNotice(`Removed ${m.email}: their sessions and API tokens stopped working.`);
    });
    setRemoving(null);
  };

  const transfer = async () => {
    const m = transferring;
    if (!m) return;
    await action.run(async () => {
      await api('POST', `/members/${encodeURIComponent(m.id)}/transfer-ownership`);
      // Now an admin: the page reloads with that role.
      window.location.reload();
    });
    setTransferring(null);
  };

  const revokeInvitation = (i: Invitation) =>
    action.run(
      async () => {
        await api('DELETE', `/members/invitations/${encodeURIComponent(i.id)}`);
        setInvitations((list) => list?.filter((x) => x.id !== i.id) ?? null);
        setNotice(`The invitation of ${i.email} is revoked: its link no longer works.`);
      },
      { key: i.id },
    );

  return (
    <section aria-labelledby={`${id}-title`}>
      <div className="page-head">
        <h1 id={`${id}-title`}>Members</h1>
      </div>
      <p className="muted">
        Roles: viewer ({ROLE_HELP.viewer}), editor ({ROLE_HELP.editor}), admin ({ROLE_HELP.admin}), owner (
        {ROLE_HELP.owner}).
      </p>

      <form className="card inline-form" onSubmit={invite}>
        <h2 className="label">Invite someone</h2>
        <div className="row wrap-row">
          <label htmlFor={`${id}-email`} className="visually-hidden">
            Email of the person to invite
          </label>
          <input
            id={`${id}-email`}
            type="email"
            className="input grow"
            value={email}
            required
            placeholder="colleague@example.com"
            onChange={(e) => setEmail(e.target.value)}
          />
          <label htmlFor={`${id}-role`} className="visually-hidden">
            Role
          </label>
          <select
            id={`${id}-role`}
            className="input"
            value={inviteRole}
            onChange={(e) => setInviteRole(e.target.value as Exclude<Role, 'owner'>)}
          >
            {ASSIGNABLE.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <button type="submit" className="button primary" disabled={action.busy || email.trim() === ''}>
            Invite
          </button>
        </div>
        <p className="help">
          hookflow makes a link to send them (and mails it, when the server has a mailer credential): it works
          once, for 7 days.
        </p>
      </form>

      {invited && (
        <div className="card" role="status">
          <h2>Invitation for {invited.email}</h2>
          {invited.mail?.sent && (
            <p data-testid="invite-mail">
              Mailed to {invited.mail.to}. The link is shown only now, in case you want to send it yourself.
            </p>
          )}
          {invited.mail && !invited.mail.sent && (
            <p className="error" data-testid="invite-mail">
              The invitation was made, but the mail to {invited.mail.to} was not sent: {invited.mail.error}
            </p>
          )}
          {!invited.mail?.sent && (
            <p>Send them this link; it is shown only now. Opening it lets them set a password and sign in.</p>
          )}
          <div className="row wrap-row">
            <code className="grow invite-url" data-testid="invite-url">
              {invited.inviteUrl}
            </code>
            <CopyButton text={invited.inviteUrl} label="Copy link" />
          </div>
          <button type="button" className="button small" onClick={() => setInvited(null)}>
            Done
          </button>
        </div>
      )}

      <Notice text={notice} />
      <ErrorMessage error={error} />

      {members === null && !error && <p className="muted">Loading members…</p>}
      {members !== null && (
        <ListTable caption="Members" columns={['Email', 'Role', 'Joined']}>
          {members.map((m) => {
            const fixed = m.role === 'owner' || m.id === me.id;
            return (
              <tr key={m.id}>
                <th scope="row">
                  {m.email}
                  {m.id === me.id && <span className="muted small"> (you)</span>}
                </th>
                <td>
                  {fixed ? (
                    m.role
                  ) : (
                    <select
                      className="input"
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      disabled={action.busyKey === m.id}
                      onChange={(e) => changeRole(m, e.target.value as Exclude<Role, 'owner'>)}
                    >
                      {ASSIGNABLE.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  )}
                </td>
                <td title={formatTime(m.createdAt)}>{formatAgo(m.createdAt)}</td>
                <td className="actions-cell">
                  {role === 'owner' && m.role !== 'owner' && (
                    <RowAction action="Make owner" row={m.email} onClick={() => setTransferring(m)} />
                  )}
                  {!fixed && (
                    <RowAction action="Remove" row={m.email} danger onClick={() => setRemoving(m)} />
                  )}
                </td>
              </tr>
            );
          })}
        </ListTable>
      )}

      <h2>Pending invitations</h2>
      {invitations !== null && invitations.length === 0 && <p className="muted">None.</p>}
      {invitations !== null && invitations.length > 0 && (
        <ListTable caption="Pending invitations" columns={['Email', 'Role', 'Expires']}>
          {invitations.map((i) => (
            <tr key={i.id}>
              <th scope="row">{i.email}</th>
              <td>{i.role}</td>
              <td title={formatTime(i.expiresAt)}>{formatTime(i.expiresAt)}</td>
              <td className="actions-cell">
                <RowAction action="Revoke" row={i.email} danger onClick={() => revokeInvitation(i)} />
              </td>
            </tr>
          ))}
        </ListTable>
      )}

      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.email ?? ''}?`}
        confirmLabel="Remove"
        danger
        busy={action.busy}
        onConfirm={remove}
        onCancel={() => setRemoving(null)}
      >
        <p>They are signed out at once, and their API tokens stop working. This cannot be undone.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={transferring !== null}
        title={`Make ${transferring?.email ?? ''} the owner?`}
        confirmLabel="Make owner"
        danger
        busy={action.busy}
        onConfirm={transfer}
        onCancel={() => setTransferring(null)}
      >
        <p>There is one owner: you become an admin, and only the new owner can hand ownership on again.</p>
      </ConfirmDialog>
    </section>
  );
}
