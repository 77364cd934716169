import { useId, useState } from 'react';
import type { FieldProblem } from '../../api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { RadioChoices } from '../../components/RadioChoices';
import { authDefaults, MASK, pathProblem, type TriggerDraft } from '../../lib/draft';
import { type AuthConfig, type AuthType, METHODS, type Method, type ResponseMode } from '../../types';
import { ScheduleFields } from './ScheduleFields';

const HANDSHAKES: { value: TriggerDraft['handshake']; label: string; help: string }[] = [
  { value: '', label: 'None', help: '' },
  {
    value: 'slack',
    label: 'Slack (url_verification)',
    help: "Slack's signed url_verification is answered with its challenge; set Slack's signing secret as the authentication.",
  },
  {
    value: 'meta',
    label: 'Meta: WhatsApp, Instagram, Messenger (hub.challenge)',
    help: "Meta's GET check is answered with hub.challenge when its verify token matches the one below; GET is added to the methods.",
  },
  {
    value: 'microsoft-graph',
    label: 'Microsoft Graph (validationToken)',
    help: 'A subscription check (?validationToken=…) is answered with the token as text, before the authentication.',
  },
  {
    value: 'zoom',
    label: 'Zoom (endpoint.url_validation)',
    help: "Zoom's check is answered with plainToken and its HMAC under your app's secret token below.",
  },
];

const AUTH_KINDS: { type: AuthType; label: string }[] = [
  { type: 'none', label: 'None: anyone with the URL' },
  { type: 'basic', label: 'Basic auth (username and password)' },
  { type: 'header', label: 'Header (e.g. Authorization: Bearer …)' },
  { type: 'jwt', label: 'JWT (Authorization: Bearer <jwt>)' },
  { type: 'hmac', label: 'HMAC signature (GitHub, Stripe, Slack …)' },
];

const RESPONSE_MODES: { mode: ResponseMode; label: string; help: string }[] = [
  {
    mode: 'immediately',
    label: 'Immediately',
    help: 'Answer 200 as soon as the request is stored; the workflow runs after.',
  },
  {
    mode: 'lastStep',
    label: 'When the last step finishes',
    help: "Wait for the run and answer with the last step's output.",
  },
  {
    mode: 'respondStep',
    label: 'From a Respond step',
    help: 'The first Respond step that runs sets status, headers and body.',
  },
];

const PRESETS = ['github', 'stripe', 'slack', 'shopify', 'standard-webhooks', 'custom'];

function problemsAt(problems: FieldProblem[], prefix: string): string | undefined {
  const found = problems.filter((p) => p.field === prefix || p.field.startsWith(`${prefix}/`));
  return found.length > 0 ? found.map((p) => p.message).join('; ') : undefined;
}

type TriggerType = TriggerDraft['type'];

const TYPES: { value: TriggerType; label: string; help: string }[] = [
  { value: 'webhook', label: 'Webhook', help: 'An HTTP call to the workflow’s URL starts it.' },
  { value: 'schedule', label: 'Schedule', help: 'A cron starts it at set times while it is active.' },
];

/** What a switch of type drops at the next save: the saved type's settings, in a few words. */
const DROPPED: Record<TriggerType, string> = {
  webhook:
    'its path and URLs (callers get 404), methods, authentication, response, options, provider URL check and alerts',
  schedule: 'its cron, time zone and missed-run policy',
};

interface PanelProps {
  trigger: TriggerDraft;
  onChange: (patch: Partial<TriggerDraft>) => void;
  problems: FieldProblem[];
  /** The stored auth, to know which secrets are saved. */
  savedAuth: AuthConfig;
  /** The stored handshake token: "***" when one is saved. */
  savedHandshakeToken?: string;
}

/**
 * The trigger's settings: its type (webhook or schedule, SPEC 7f), then that type's fields.
 * Switching away from the saved type asks first: saving drops the saved type's settings (the form
 * keeps them until then, so switching back before saving brings them back).
 */
export function TriggerPanel({ savedType, ...props }: PanelProps & { savedType: TriggerType }) {
  const id = useId();
  const { trigger, onChange } = props;
  const [asking, setAsking] = useState<TriggerType | null>(null);
  const choose = (type: TriggerType) => {
    if (type === trigger.type) return;
    if (trigger.type === savedType) setAsking(type);
    else onChange({ type });
  };
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{trigger.type === 'schedule' ? 'Schedule trigger' : 'Webhook trigger'}</h2>
      <RadioChoices
        legend="Starts on"
        options={TYPES}
        value={trigger.type}
        help={TYPES.find((t) => t.value === trigger.type)?.help}
        onChange={choose}
      />
      {trigger.type === 'schedule' ? (
        <ScheduleFields trigger={trigger} onChange={onChange} problems={props.problems} />
      ) : (
        <WebhookFields {...props} />
      )}
      <ConfirmDialog
        open={asking !== null}
        title={`Start on a ${asking ?? ''} instead?`}
        confirmLabel={`Switch to ${asking ?? ''}`}
        cancelLabel={`Keep the ${savedType}`}
        onConfirm={() => {
          if (asking) onChange({ type: asking });
          setAsking(null);
        }}
        onCancel={() => setAsking(null)}
      >
        <p>
          Saving then drops the {savedType}’s settings: {DROPPED[savedType]}. Until you save, switching back
          brings them back.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** The webhook trigger's settings: methods, path (checked as you type), auth, response, options. */
function WebhookFields({ trigger, onChange, problems, savedAuth, savedHandshakeToken }: PanelProps) {
  const id = useId();
  const livePathError = pathProblem(trigger.path);
  const pathError = livePathError ?? problemsAt(problems, '/trigger/path');
  const auth = trigger.auth;
  const setAuth = (patch: Partial<AuthConfig>) => onChange({ auth: { ...auth, ...patch } });

  const toggleMethod = (m: Method, on: boolean) =>
    onChange({
      methods: on
        ? METHODS.filter((x) => x === m || trigger.methods.includes(x))
        : trigger.methods.filter((x) => x !== m),
    });

  const text = (
    name: keyof TriggerDraft,
    label: string,
    opts: { help?: string; placeholder?: string; inputMode?: 'numeric'; field?: string } = {},
  ) => {
    const error = opts.field ? problemsAt(problems, opts.field) : undefined;
    return (
      <div className="field">
        <label htmlFor={`${id}-${name}`} className="label">
          {label}
        </label>
        <input
          id={`${id}-${name}`}
          data-field={opts.field}
          className={`input${error ? ' invalid' : ''}`}
          value={String(trigger[name])}
          inputMode={opts.inputMode}
          placeholder={opts.placeholder}
          aria-invalid={error ? true : undefined}
          aria-describedby={
            [opts.help ? `${id}-${name}-help` : '', error ? `${id}-${name}-error` : '']
              .filter(Boolean)
              .join(' ') || undefined
          }
          onChange={(e) => onChange({ [name]: e.target.value } as Partial<TriggerDraft>)}
        />
        {opts.help && (
          <p id={`${id}-${name}-help`} className="help">
            {opts.help}
          </p>
        )}
        {error && (
          <p id={`${id}-${name}-error`} className="field-error">
            {error}
          </p>
        )}
      </div>
    );
  };

  /** A secret input: a saved secret shows as a placeholder; leaving it empty keeps it. */
  const secret = (key: 'password' | 'value' | 'secret', label: string) => {
    const saved = savedAuth.type === auth.type && savedAuth[key] === MASK;
    const value = auth[key] === MASK ? '' : (auth[key] ?? '');
    const error = problemsAt(problems, `/trigger/auth/${key}`);
    return (
      <div className="field">
        <label htmlFor={`${id}-auth-${key}`} className="label">
          {label}
        </label>
        <input
          id={`${id}-auth-${key}`}
          data-field={`/trigger/auth/${key}`}
          className={`input${error ? ' invalid' : ''}`}
          type="password"
          autoComplete="new-password"
          value={value}
          placeholder={saved ? 'Saved; type to replace it' : ''}
          aria-describedby={`${id}-auth-${key}-help`}
          aria-invalid={error ? true : undefined}
          onChange={(e) => setAuth({ [key]: e.target.value === '' && saved ? MASK : e.target.value })}
        />
        <p id={`${id}-auth-${key}-help`} className="help">
          Stored encrypted; never shown again{saved ? '. Leave empty to keep the saved one.' : '.'}
        </p>
        {error && <p className="field-error">{error}</p>}
      </div>
    );
  };

  /** Meta's verify token or Zoom's secret token: write-only like the auth secrets. */
  const handshakeToken = () => {
    const saved = savedHandshakeToken === MASK;
    const value = trigger.handshakeToken === MASK ? '' : trigger.handshakeToken;
    const error = problemsAt(problems, '/trigger/handshakeToken');
    return (
      <div className="field">
        <label htmlFor={`${id}-handshake-token`} className="label">
          {trigger.handshake === 'meta' ? 'Verify token' : 'Secret token'}
        </label>
        <input
          id={`${id}-handshake-token`}
          data-field="/trigger/handshakeToken"
          className={`input${error ? ' invalid' : ''}`}
          type="password"
          autoComplete="new-password"
          value={value}
          placeholder={saved ? 'Saved; type to replace it' : ''}
          aria-describedby={`${id}-handshake-token-help`}
          aria-invalid={error ? true : undefined}
          onChange={(e) =>
            onChange({ handshakeToken: e.target.value === '' && saved ? MASK : e.target.value })
          }
        />
        <p id={`${id}-handshake-token-help`} className="help">
          {trigger.handshake === 'meta'
            ? "The same text you enter as the verify token in Meta's webhook settings."
            : "Your Zoom app's secret token (Features → Event Subscriptions)."}{' '}
          Stored encrypted; never shown again.
        </p>
        {error && <p className="field-error">{error}</p>}
      </div>
    );
  };

  const authText = (key: keyof AuthConfig, label: string, placeholder?: string, multiline?: boolean) => (
    <div className="field">
      <label htmlFor={`${id}-auth-${key}`} className="label">
        {label}
      </label>
      {multiline ? (
        <textarea
          id={`${id}-auth-${key}`}
          className="input mono"
          rows={4}
          value={String(auth[key] ?? '')}
          placeholder={placeholder}
          onChange={(e) => setAuth({ [key]: e.target.value })}
        />
      ) : (
        <input
          id={`${id}-auth-${key}`}
          className="input"
          value={String(auth[key] ?? '')}
          placeholder={placeholder}
          onChange={(e) => setAuth({ [key]: e.target.value })}
        />
      )}
      {problemsAt(problems, `/trigger/auth/${key}`) && (
        <p className="field-error">{problemsAt(problems, `/trigger/auth/${key}`)}</p>
      )}
    </div>
  );

  const select = (
    label: string,
    value: string,
    options: string[],
    onSelect: (v: string) => void,
    key: string,
  ) => (
    <div className="field">
      <label htmlFor={`${id}-${key}`} className="label">
        {label}
      </label>
      <select id={`${id}-${key}`} className="input" value={value} onChange={(e) => onSelect(e.target.value)}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </div>
  );

  const mode = RESPONSE_MODES.find((m) => m.mode === trigger.responseMode);

  return (
    <>
      <fieldset className="field">
        <legend className="label">HTTP methods</legend>
        <div className="checks">
          {METHODS.map((m) => (
            <label key={m} className="check">
              <input
                type="checkbox"
                checked={trigger.methods.includes(m)}
                onChange={(e) => toggleMethod(m, e.target.checked)}
              />
              {m}
            </label>
          ))}
        </div>
        {trigger.methods.length === 0 && <p className="field-error">Choose at least one method.</p>}
      </fieldset>

      <div className="field">
        <label htmlFor={`${id}-path`} className="label">
          Path
        </label>
        <div className={`prefixed${pathError ? ' invalid' : ''}`}>
          <span className="prefix" aria-hidden="true">
            /webhook/
          </span>
          <input
            id={`${id}-path`}
            data-field="/trigger/path"
            className="input mono"
            value={trigger.path}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={pathError ? true : undefined}
            aria-describedby={`${id}-path-help${pathError ? ` ${id}-path-error` : ''}`}
            onChange={(e) => onChange({ path: e.target.value })}
          />
        </div>
        <p id={`${id}-path-help`} className="help">
          Segments of letters, digits, <code>. _ ~ -</code>, or <code>:name</code> for a parameter (e.g.{' '}
          <code>orders/:id</code>).
        </p>
        {pathError && (
          <p id={`${id}-path-error`} className="field-error" role="status">
            {pathError}
          </p>
        )}
      </div>

      <div className="field">
        <label htmlFor={`${id}-auth`} className="label">
          Authentication
        </label>
        <select
          id={`${id}-auth`}
          className="input"
          value={auth.type}
          onChange={(e) => {
            const type = e.target.value as AuthType;
            onChange({ auth: type === savedAuth.type ? { ...savedAuth } : authDefaults(type) });
          }}
        >
          {AUTH_KINDS.map((k) => (
            <option key={k.type} value={k.type}>
              {k.label}
            </option>
          ))}
        </select>
      </div>
      {auth.type !== 'none' && (
        <div className="subfields">
          {auth.type === 'basic' && (
            <>
              {authText('username', 'Username')}
              {secret('password', 'Password')}
            </>
          )}
          {auth.type === 'header' && (
            <>
              {authText('name', 'Header name', 'Authorization')}
              {secret('value', 'Expected value')}
            </>
          )}
          {auth.type === 'jwt' && (
            <>
              {select(
                'Algorithm',
                auth.algorithm ?? 'HS256',
                ['HS256', 'RS256', 'ES256'],
                (v) => setAuth({ algorithm: v }),
                'jwt-alg',
              )}
              {auth.algorithm === 'HS256' || !auth.algorithm
                ? secret('secret', 'Shared secret')
                : authText('publicKey', 'Public key (PEM)', '-----BEGIN PUBLIC KEY-----', true)}
              {authText('issuer', 'Issuer (optional)')}
              {authText('audience', 'Audience (optional)')}
            </>
          )}
          {auth.type === 'hmac' && (
            <>
              {select(
                'Provider',
                auth.preset ?? 'github',
                PRESETS,
                (v) => setAuth({ preset: v }),
                'hmac-preset',
              )}
              {secret('secret', 'Signing secret')}
              {auth.preset === 'custom' && (
                <>
                  {authText('header', 'Signature header', 'X-Signature')}
                  {select(
                    'Hash',
                    auth.algorithm ?? 'sha256',
                    ['sha256', 'sha1', 'sha512'],
                    (v) => setAuth({ algorithm: v }),
                    'hmac-alg',
                  )}
                  {select(
                    'Encoding',
                    auth.encoding ?? 'hex',
                    ['hex', 'base64'],
                    (v) => setAuth({ encoding: v }),
                    'hmac-enc',
                  )}
                  {authText('prefix', 'Prefix (optional)', 'sha256=')}
                </>
              )}
            </>
          )}
        </div>
      )}

      <div className="field">
        <label htmlFor={`${id}-handshake`} className="label">
          Provider URL check
        </label>
        <select
          id={`${id}-handshake`}
          data-field="/trigger/handshake"
          className="input"
          value={trigger.handshake}
          aria-describedby={`${id}-handshake-help`}
          onChange={(e) => onChange({ handshake: e.target.value as TriggerDraft['handshake'] })}
        >
          {HANDSHAKES.map((h) => (
            <option key={h.value} value={h.value}>
              {h.label}
            </option>
          ))}
        </select>
        <p id={`${id}-handshake-help`} className="help">
          {HANDSHAKES.find((h) => h.value === trigger.handshake)?.help ||
            'Some providers check the URL before sending events; hookflow answers the check itself, without starting the workflow.'}
        </p>
      </div>
      {(trigger.handshake === 'meta' || trigger.handshake === 'zoom') && (
        <div className="subfields">{handshakeToken()}</div>
      )}

      <div className="field">
        <label htmlFor={`${id}-mode`} className="label">
          Response
        </label>
        <select
          id={`${id}-mode`}
          className="input"
          value={trigger.responseMode}
          aria-describedby={`${id}-mode-help`}
          onChange={(e) => onChange({ responseMode: e.target.value as ResponseMode })}
        >
          {RESPONSE_MODES.map((m) => (
            <option key={m.mode} value={m.mode}>
              {m.label}
            </option>
          ))}
        </select>
        <p id={`${id}-mode-help`} className="help">
          {mode?.help}
        </p>
      </div>
      {trigger.responseMode === 'immediately' && (
        <div className="subfields">
          <label className="check">
            <input
              type="checkbox"
              checked={trigger.responseNoContent}
              onChange={(e) => onChange({ responseNoContent: e.target.checked })}
            />
            Answer 204 No Content
          </label>
          {!trigger.responseNoContent && (
            <>
              {text('responseStatus', 'Status (optional)', {
                placeholder: '200',
                inputMode: 'numeric',
                field: '/trigger/response/status',
              })}
              <div className="field">
                <label htmlFor={`${id}-responseBody`} className="label">
                  Body (optional, JSON or text)
                </label>
                <textarea
                  id={`${id}-responseBody`}
                  className="input mono"
                  rows={3}
                  value={trigger.responseBody}
                  placeholder='{"message": "Workflow was started", "executionId": "…"}'
                  onChange={(e) => onChange({ responseBody: e.target.value })}
                />
              </div>
            </>
          )}
        </div>
      )}
      {trigger.responseMode === 'lastStep' &&
        text('responseTimeoutMs', 'Wait at most (ms)', {
          placeholder: '30000',
          inputMode: 'numeric',
          help: 'After this the caller gets 504 with the execution id; the run goes on.',
          field: '/trigger/response/timeoutMs',
        })}
      {trigger.responseMode === 'respondStep' && (
        <div className="subfields">
          <label className="check">
            <input
              type="checkbox"
              checked={trigger.responseSandbox}
              aria-describedby={`${id}-sandbox-help`}
              onChange={(e) => onChange({ responseSandbox: e.target.checked })}
            />
            Sandbox the answer (recommended)
          </label>
          <p id={`${id}-sandbox-help`} className="help">
            A page the respond step builds runs in an origin of its own (Content-Security-Policy: sandbox), so
            its scripts cannot act as you in hookflow. Uncheck only for pages you serve on purpose.
          </p>
        </div>
      )}

      <details className="options">
        <summary>Options: limits, CORS, IP allowlist, rate limit, idempotency, schema check</summary>
        <div className="options-grid">
          {text('maxBodyBytes', 'Largest body (bytes)', {
            inputMode: 'numeric',
            placeholder: 'server limit',
            field: '/trigger/options/maxBodyBytes',
          })}
          <div className="field">
            <label htmlFor={`${id}-origins`} className="label">
              Allowed origins (CORS)
            </label>
            <textarea
              id={`${id}-origins`}
              className="input mono"
              rows={2}
              placeholder="* (any origin)"
              value={trigger.allowedOrigins}
              aria-describedby={`${id}-list-help`}
              onChange={(e) => onChange({ allowedOrigins: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor={`${id}-ips`} className="label">
              IP allowlist (CIDR)
            </label>
            <textarea
              id={`${id}-ips`}
              className="input mono"
              rows={2}
              placeholder="any address"
              value={trigger.ipAllowlist}
              aria-describedby={`${id}-list-help`}
              onChange={(e) => onChange({ ipAllowlist: e.target.value })}
            />
          </div>
          <p id={`${id}-list-help`} className="help span-all">
            Lists: one entry per line (or separated by commas).
          </p>
          {text('rateRequests', 'Rate limit: requests', {
            inputMode: 'numeric',
            field: '/trigger/options/rateLimit',
          })}
          {text('ratePerSeconds', 'Rate limit: per seconds', { inputMode: 'numeric' })}
          {text('idempotencyHeader', 'Idempotency header', { placeholder: 'Idempotency-Key' })}
          {text('idempotencyKey', 'Idempotency key expression', {
            placeholder: '{{ headers."x-github-delivery" }}',
          })}
          {text('idempotencyWindow', 'Idempotency window (s)', {
            inputMode: 'numeric',
            placeholder: '86400',
          })}
          {select(
            'Schema check on production',
            trigger.schemaCheck,
            ['off', 'warn', 'reject'],
            (v) => onChange({ schemaCheck: v as TriggerDraft['schemaCheck'] }),
            'schema-check',
          )}
        </div>
      </details>
    </>
  );
}
