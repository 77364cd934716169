import { type ReactNode, useEffect, useState } from 'react';
import { api } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { formatTime } from '../../lib/format';
import { Link } from '../../router';
import type { WaitingFor as Waiting } from '../../types';

/**
 * What a waiting execution waits for (SPEC 7g): a call to its resume URL (with a copy button and a
 * curl line, so the person approving by hand can do it from here), or a request of another
 * workflow whose match gives its key; and until when.
 */
export function WaitingFor({ waiting }: { waiting: Waiting }) {
  const [workflowName, setWorkflowName] = useState<string | null>(null);
  const watched = waiting.for === 'event' ? waiting.workflowId : undefined;
  useEffect(() => {
    if (!watched) return;
    api<{ name: string }>('GET', `/workflows/${encodeURIComponent(watched)}`).then(
      (w) => setWorkflowName(w.name),
      () => setWorkflowName(null),
    );
  }, [watched]);
  const until = ` until ${formatTime(waiting.expiresAt)}`;
  if (waiting.for === 'call') {
    const curl = `curl -X POST '${waiting.resumeUrl}'`;
    return (
      <Box>
        <p>
          Step <strong>{waiting.step}</strong> waits for a call to this execution's resume URL{until}; then it
          gives <code>{'{"timedOut": true}'}</code>. The first call resumes it, with its request as the step's
          output; a second call is refused (409).
        </p>
        <div className="copy-row">
          <code className="copy-value url" data-testid="resume-url">
            {waiting.resumeUrl}
          </code>
          <CopyButton text={waiting.resumeUrl} label="Copy the resume URL" />
        </div>
        <div className="copy-row">
          <code className="copy-value curl">{curl}</code>
          <CopyButton text={curl} label="Copy the curl command for the resume URL" />
        </div>
      </Box>
    );
  }
  return (
    <Box>
      <p>
        Step <strong>{waiting.step}</strong> waits for a production request of{' '}
        <Link to={`/workflows/${waiting.workflowId}`}>{workflowName ?? waiting.workflowId}</Link> whose match
        gives <code data-testid="waiting-key">{waiting.key}</code>
        {until}; then it gives <code>{'{"timedOut": true}'}</code>.
      </p>
    </Box>
  );
}

function Box({ children }: { children: ReactNode }) {
  return (
    <section
      className="notice small waiting-for"
      aria-label="What this execution waits for"
      data-testid="waiting-for"
    >
      {children}
    </section>
  );
}
