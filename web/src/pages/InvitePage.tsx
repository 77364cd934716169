import { type FormEvent, useId, useState } from 'react';
import { type ApiError, asApiError, auth } from '../api';
import { ErrorMessage } from '../components/ErrorMessage';
import { NewPassword, newPasswordProblem } from '../components/NewPassword';
import { useTitle } from '../lib/title';
import type { User } from '../types';

/**
 * The page of an invitation link (`/invite/<token>`, SPEC 11b): choose a password, and the account
 * with the invited email and role is made and signed in. A link works once, for 7 days.
 */
export function InvitePage({
  token,
  onSignedIn,
}: {
  token: string;
  onSignedIn: (user: User, csrfToken: string) => void;
}) {
  useTitle('Join hookflow');
  const id = useId();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setError(null);
    const wrong = newPasswordProblem(password, confirm);
    if (wrong) {
      setProblem(wrong);
      return;
    }
    setBusy(true);
    try {
      const session = await auth.acceptInvitation(token, password);
      onSignedIn(session.user, session.csrfToken);
    } catch (err) {
      setError(asApiError(err));
      setBusy(false);
    }
  };

  return (
    <main className="center-page">
      <form className="card narrow auth-form" onSubmit={submit} aria-describedby={`${id}-intro`} noValidate>
        <div className="auth-brand">
          <img src="/favicon.svg" alt="" width="32" height="32" />
          <span>hookflow</span>
        </div>
        <h1>Join hookflow</h1>
        <p id={`${id}-intro`} className="muted">
          You were invited to this hookflow. Choose a password; you sign in with it and the email the
          invitation was sent to.
        </p>
        <NewPassword password={password} confirm={confirm} onPassword={setPassword} onConfirm={setConfirm} />
        {problem && (
          <p className="field-error" role="alert">
            {problem}
          </p>
        )}
        <ErrorMessage error={error} />
        <button type="submit" className="button primary block" disabled={busy}>
          {busy ? 'Joining…' : 'Join'}
        </button>
      </form>
    </main>
  );
}
