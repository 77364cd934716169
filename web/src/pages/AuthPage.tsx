import { type FormEvent, useId, useState } from 'react';
import { type ApiError, asApiError, auth } from '../api';
import { ErrorMessage } from '../components/ErrorMessage';
import { NewPassword, newPasswordProblem } from '../components/NewPassword';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { takeSetupCode, useSetupCodeChanges } from '../lib/setupCode';
import { useTitle } from '../lib/title';
import type { User } from '../types';

/** First start: create the owner account. Afterwards: sign in. */
export function AuthPage({
  mode,
  notice,
  onSignedIn,
}: {
  mode: 'setup' | 'login';
  notice?: string | undefined;
  onSignedIn: (user: User, csrfToken: string) => void;
}) {
  const id = useId();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  // Filled in from the address hookflow printed (`…/#setup-code=<code>`).
  const [setupCode, setSetupCode] = useState(() => (mode === 'setup' ? takeSetupCode() : ''));
  useSetupCodeChanges(setSetupCode);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const setup = mode === 'setup';
  useTitle(setup ? 'Create the owner account' : 'Sign in');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setError(null);
    const wrong = setup ? newPasswordProblem(password, confirm) : null;
    if (wrong) {
      setProblem(wrong);
      return;
    }
    if (setup && setupCode.trim() === '') {
      setProblem(
        'Enter the setup code: open the address hookflow printed when it started, or run "hookflow setup-code" on the server.',
      );
      return;
    }
    setBusy(true);
    try {
      const session = setup
        ? await auth.setup(email.trim(), password, setupCode.trim())
        : await auth.login(email.trim(), password);
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
        <h1>{setup ? 'Create the owner account' : 'Sign in'}</h1>
        <p id={`${id}-intro`} className="muted">
          {setup
            ? 'This is the first start of this hookflow. The account you create here owns it; creating it needs the setup code hookflow printed when it started.'
            : 'Sign in to manage workflows and see their executions.'}
        </p>
        <Notice text={notice} />
        {setup && (
          <TextField
            label="Setup code"
            autoComplete="off"
            spellCheck={false}
            required
            help={
              <>
                Filled in from the address hookflow printed when it started; <code>hookflow setup-code</code>{' '}
                on the server prints a new one.
              </>
            }
            value={setupCode}
            onChange={(e) => setSetupCode(e.target.value)}
          />
        )}
        <TextField
          label="Email"
          type="email"
          autoComplete={setup ? 'email' : 'username'}
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        {setup ? (
          <NewPassword
            password={password}
            confirm={confirm}
            onPassword={setPassword}
            onConfirm={setConfirm}
          />
        ) : (
          <TextField
            label="Password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        )}
        {problem && (
          <p className="field-error" role="alert">
            {problem}
          </p>
        )}
        <ErrorMessage error={error} />
        <button type="submit" className="button primary block" disabled={busy}>
          {busy ? (setup ? 'Creating…' : 'Signing in…') : setup ? 'Create account' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
