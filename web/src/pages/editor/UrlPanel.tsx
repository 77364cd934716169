import { useId } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { curlLine, fillParams, primaryMethod } from '../../lib/curl';
import type { AuthConfig, Method } from '../../types';

/**
 * Both webhook URLs side by side, each with what it is for, whether it serves now, a copy button
 * and a ready `curl` line built from the current (even unsaved) settings.
 */
export function UrlPanel({
  baseUrl,
  path,
  methods,
  auth,
  active,
  publishedVersion,
  listening,
  unsaved,
}: {
  baseUrl: string;
  path: string;
  methods: Method[];
  auth: AuthConfig;
  active: boolean;
  publishedVersion: number | null;
  listening: boolean;
  unsaved: boolean;
}) {
  const id = useId();
  const method = primaryMethod(methods);
  const urls = [
    {
      key: 'test',
      title: 'Test URL',
      url: `${baseUrl}/webhook-test/${path}`,
      serving: listening,
      state: listening
        ? 'Listening now: the next request is captured'
        : 'Serves only while you listen for a test event',
    },
    {
      key: 'production',
      title: 'Production URL',
      url: `${baseUrl}/webhook/${path}`,
      serving: active,
      state: active
        ? `Active: serves live traffic with v${publishedVersion}`
        : 'Not activated: answers 404 until you activate the workflow',
    },
  ];
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Webhook URLs</h2>
      {unsaved && (
        <p className="notice small" role="status">
          These match your unsaved settings: save for the test URL to use them, then publish for the
          production URL.
        </p>
      )}
      <div className="url-list">
        {urls.map((u) => {
          const curl = curlLine(fillParams(u.url), method, auth);
          return (
            <div key={u.key} className={`url-box url-${u.key}`}>
              <div className="url-head">
                <h3 id={`${id}-${u.key}`}>{u.title}</h3>
                <span className={`dot ${u.serving ? 'on' : 'off'}`} aria-hidden="true" />
                <span className="small muted">{u.state}</span>
              </div>
              <div className="copy-row">
                <code className="copy-value url" data-testid={`${u.key}-url`}>
                  {u.url}
                </code>
                <CopyButton text={u.url} label={`Copy the ${u.title.toLowerCase()}`} />
              </div>
              <div className="copy-row">
                <code className="copy-value curl" data-testid={`${u.key}-curl`}>
                  {curl}
                </code>
                <CopyButton text={curl} label={`Copy the curl command for the ${u.title.toLowerCase()}`} />
              </div>
            </div>
          );
        })}
      </div>
      {methods.length > 1 && (
        <p className="help">
          The curl lines use {method}; the trigger also takes {methods.filter((m) => m !== method).join(', ')}
          .
        </p>
      )}
    </section>
  );
}
