/**
 * An `email` step's record, readably (SPEC 7e): who the message went to — each recipient with
 * whether the server took it, and the reply when it refused — the subject, the attachments, and
 * the server's last reply. The output's `accepted` and `rejected` say who got it.
 */
import type { ExecutionStep } from '../../types';
import { TableWrap } from '../../components/TableWrap';

function addressOf(recipient: string): string {
  return (/<([^>]+)>\s*$/.exec(recipient)?.[1] ?? recipient).trim().toLowerCase();
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function EmailRecord({ step }: { step: ExecutionStep }) {
  const mail = step.mail;
  if (!mail) return null;
  const output = (step.output ?? {}) as { accepted?: unknown; rejected?: unknown };
  const accepted = new Set(
    Array.isArray(output.accepted) ? output.accepted.map((a) => String(a).toLowerCase()) : [],
  );
  const refused = new Map((step.refused ?? []).map((r) => [r.recipient.toLowerCase(), r.reply]));
  const rejected = new Set(
    Array.isArray(output.rejected) ? output.rejected.map((a) => String(a).toLowerCase()) : [],
  );
  const rows = (['to', 'cc', 'bcc'] as const).flatMap((field) =>
    (mail[field] ?? []).map((recipient) => {
      const address = addressOf(recipient);
      const state = accepted.has(address)
        ? 'accepted'
        : rejected.has(address) || refused.has(address)
          ? 'refused'
          : 'not sent';
      return { field, recipient, state, reply: refused.get(address) };
    }),
  );
  return (
    <div className="field email-record">
      <p className="label small">Message</p>
      <dl className="small email-meta">
        {mail.from && (
          <>
            <dt>From</dt>
            <dd>{mail.from}</dd>
          </>
        )}
        {mail.subject !== undefined && (
          <>
            <dt>Subject</dt>
            <dd>{mail.subject}</dd>
          </>
        )}
        {mail.replyTo && mail.replyTo.length > 0 && (
          <>
            <dt>Reply to</dt>
            <dd>{mail.replyTo.join(', ')}</dd>
          </>
        )}
      </dl>
      <TableWrap label={`Recipients of ${step.name}`}>
        <table className="small data-table recipients">
          <caption className="visually-hidden">Recipients of {step.name}</caption>
          <thead>
            <tr>
              <th scope="col">Recipient</th>
              <th scope="col">As</th>
              <th scope="col">Server</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.field}:${r.recipient}`} data-state={r.state}>
                <td>{r.recipient}</td>
                <td>{r.field}</td>
                <td>
                  {r.state === 'accepted' && <span className="badge status-succeeded">accepted</span>}
                  {r.state === 'refused' && (
                    <>
                      <span className="badge status-failed">refused</span> {r.reply}
                    </>
                  )}
                  {r.state === 'not sent' && <span className="muted">not sent</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {mail.attachments && mail.attachments.length > 0 && (
        <p className="small">
          Attachments:{' '}
          {mail.attachments.map((a) => `${a.filename} (${a.mimeType}, ${size(a.size)})`).join(', ')}
        </p>
      )}
      {mail.reply && <p className="small muted">Server: {mail.reply}</p>}
    </div>
  );
}
