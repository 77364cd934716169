import { DataStorePage } from './pages/DataStore';
import { VariableListPage } from './pages/VariableList';
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { type ApiError, asApiError, auth, setCsrfToken, setSessionLostHandler } from './api';
import { withBase } from './base';
import { ErrorMessage } from './components/ErrorMessage';
import { AuditList } from './pages/AuditList';
import { AuthPage } from './pages/AuthPage';
import { InvitePage } from './pages/InvitePage';
import { MemberList } from './pages/MemberList';
import { ExecutionDetail } from './pages/ExecutionDetail';
import { ExecutionList } from './pages/ExecutionList';
import { TokenList } from './pages/TokenList';
import { CredentialList } from './pages/CredentialList';
import { VersionHistory } from './pages/VersionHistory';
import { WorkflowEditor } from './pages/WorkflowEditor';
import { WorkflowList } from './pages/WorkflowList';
import { takeSetupCode } from './lib/setupCode';
import { RoleContext } from './lib/role';
import { useTitle } from './lib/title';
import { Link, leave, match, navigate, useLocation } from './router';
import { atLeast } from '../../src/shared/roles';
import type { User } from './types';

type Session =
  | { state: 'loading' }
  | { state: 'unreachable'; error: ApiError }
  | { state: 'setup' }
  | { state: 'signedOut'; notice?: string }
  | { state: 'signedIn'; user: User };

export function App() {
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const location = useLocation();
  const invite = match('/invite/:token', location.split('?')[0]!);

  const load = useCallback(async () => {
    // Out of the address bar before anything else happens, whichever page the status leads to.
    takeSetupCode();
    try {
      const status = await auth.status();
      setCsrfToken(status.csrfToken);
      if (status.setupRequired) setSession({ state: 'setup' });
      else if (status.user) setSession({ state: 'signedIn', user: status.user });
      else setSession({ state: 'signedOut' });
    } catch (err) {
      setSession({ state: 'unreachable', error: asApiError(err) });
    }
  }, []);

  useEffect(() => {
    load();
    setSessionLostHandler(() => {
      setCsrfToken(null);
      setSession({ state: 'signedOut', notice: 'Your session has ended. Sign in again to go on.' });
    });
  }, [load]);

  const signedIn = (user: User, csrfToken: string) => {
    setCsrfToken(csrfToken);
    setSession({ state: 'signedIn', user });
  };

  // An invitation link opens its own page, signed in or not (the link is someone else's account).
  if (invite && session.state !== 'loading' && session.state !== 'unreachable') {
    return (
      <InvitePage
        token={invite.token!}
        onSignedIn={(user, csrfToken) => {
          navigate('/', { replace: true });
          signedIn(user, csrfToken);
        }}
      />
    );
  }

  switch (session.state) {
    case 'loading':
      return (
        <main className="center-page" aria-busy="true">
          <p className="muted">Loading hookflow…</p>
        </main>
      );
    case 'unreachable':
      return (
        <main className="center-page">
          <div className="card narrow">
            <h1>hookflow</h1>
            <ErrorMessage error={session.error} />
            <button type="button" className="button primary" onClick={load}>
              Try again
            </button>
          </div>
        </main>
      );
    case 'setup':
      return <AuthPage mode="setup" onSignedIn={signedIn} />;
    case 'signedOut':
      return <AuthPage mode="login" notice={session.notice} onSignedIn={signedIn} />;
    case 'signedIn':
      return (
        <Shell
          user={session.user}
          onSignedOut={() => {
            setCsrfToken(null);
            setSession({ state: 'signedOut', notice: 'You are signed out.' });
          }}
        />
      );
  }
}

function Shell({ user, onSignedOut }: { user: User; onSignedOut: () => void }) {
  const location = useLocation();
  const path = location.split('?')[0]!;
  const [error, setError] = useState<ApiError | null>(null);

  const signOut = () => leave(signOutNow);
  const signOutNow = async () => {
    try {
      await auth.logout();
      navigate('/', { replace: true });
      onSignedOut();
    } catch (err) {
      setError(asApiError(err));
    }
  };

  const workflow = match('/workflows/:id', path);
  const history = match('/workflows/:id/versions', path);
  const execution = match('/executions/:id', path);
  let page: ReactNode;
  if (path === '/' || path === '/workflows') page = <WorkflowList />;
  else if (workflow) page = <WorkflowEditor key={workflow.id} id={workflow.id!} />;
  else if (history) page = <VersionHistory key={history.id} id={history.id!} />;
  else if (path === '/executions') page = <ExecutionList search={location.split('?')[1] ?? ''} />;
  else if (execution) page = <ExecutionDetail key={execution.id} id={execution.id!} />;
  else if (path === '/tokens') page = <TokenList />;
  else if (path === '/credentials' && atLeast(user.role, 'editor')) page = <CredentialList />;
  else if (path === '/variables' && atLeast(user.role, 'editor')) page = <VariableListPage />;
  else if (path === '/data' && atLeast(user.role, 'editor')) page = <DataStorePage />;
  else if (path === '/members' && atLeast(user.role, 'admin')) page = <MemberList me={user} />;
  else if (path === '/audit' && atLeast(user.role, 'admin'))
    page = <AuditList search={location.split('?')[1] ?? ''} />;
  else page = <NotFound path={path} />;

  const section = path.startsWith('/executions')
    ? 'executions'
    : path === '/tokens'
      ? 'tokens'
      : path === '/credentials'
        ? 'credentials'
        : path === '/variables'
          ? 'variables'
          : path === '/data'
            ? 'data'
            : path === '/members'
              ? 'members'
              : path === '/audit'
                ? 'audit'
                : 'workflows';
  return (
    <RoleContext.Provider value={user.role}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="hookflow, workflows">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          <span>hookflow</span>
        </Link>
        <nav aria-label="Main" className="topnav">
          <Link to="/" aria-current={section === 'workflows' ? 'page' : undefined}>
            Workflows
          </Link>
          <Link to="/executions" aria-current={section === 'executions' ? 'page' : undefined}>
            Executions
          </Link>
          {atLeast(user.role, 'editor') && (
            <Link to="/credentials" aria-current={section === 'credentials' ? 'page' : undefined}>
              Credentials
            </Link>
          )}
          {atLeast(user.role, 'editor') && (
            <Link to="/variables" aria-current={section === 'variables' ? 'page' : undefined}>
              Variables
            </Link>
          )}
          {atLeast(user.role, 'editor') && (
            <Link to="/data" aria-current={section === 'data' ? 'page' : undefined}>
              Data
            </Link>
          )}
          <Link to="/tokens" aria-current={section === 'tokens' ? 'page' : undefined}>
            API tokens
          </Link>
          {atLeast(user.role, 'admin') && (
            <Link to="/members" aria-current={section === 'members' ? 'page' : undefined}>
              Members
            </Link>
          )}
          {atLeast(user.role, 'admin') && (
            <Link to="/audit" aria-current={section === 'audit' ? 'page' : undefined}>
              Audit
            </Link>
          )}
          <a href={withBase('/api/docs')}>API docs</a>
        </nav>
        <div className="topbar-user">
          <span className="muted small user-email" title={`${user.email} (${user.role})`}>
            {user.email}
          </span>
          <span className="muted small" data-testid="user-role">
            {user.role}
          </span>
          <button type="button" className="button small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" className="page">
        <ErrorMessage error={error} />
        {page}
      </main>
    </RoleContext.Provider>
  );
}

function NotFound({ path }: { path: string }) {
  useTitle('Page not found');
  return (
    <div className="card">
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{path}</code>. <Link to="/">Go to the workflows</Link>.
      </p>
    </div>
  );
}
