import { useCallback, useEffect, useId, useState } from 'react';
import { type ApiError, api, asApiError, type FieldProblem, qs } from '../../api';
import { ErrorMessage } from '../../components/ErrorMessage';
import { ListTable } from '../../components/ListTable';
import { ReferenceSelect } from '../../components/ReferenceSelect';
import type { TriggerDraft } from '../../lib/draft';
import { formatAgo, formatTime } from '../../lib/format';
import { Link } from '../../router';
import type { Page, Workflow } from '../../types';

/** GET /workflows/:id/health (SPEC 7g). */
interface HealthReport {
  lastCallAt: string | null;
  callsLast24Hours: number;
  hours: { hour: string; calls: number; refusals: number }[];
  refusalsByCode: Record<string, number>;
  alerts: {
    kind: string;
    since: string;
    firedAt: string;
    lastSeen: string;
    details: Record<string, unknown>;
    executionId: string | null;
  }[];
}

type AlertFields = Pick<
  TriggerDraft,
  'alertWorkflowId' | 'alertSilenceMinutes' | 'alertRejectionsPerMinute' | 'alertSchemaDrift'
>;

const KIND_LABELS: Record<string, string> = {
  silence: 'Silence',
  rejections: 'Refusal spike',
  schemaDrift: 'Schema drift',
};

/**
 * Trigger health (SPEC 7g): how the trigger is doing — the last accepted call, calls and refusals
 * per hour over a day, refusals by code, the alerts raised — and when to run an alert workflow.
 * A webhook that stops arriving, or starts failing its signature check, shows here and alerts,
 * without anyone watching the executions.
 */
export function HealthPanel({
  workflowId,
  alerts,
  onChange,
  problems,
}: {
  workflowId: string;
  alerts: AlertFields;
  onChange: (patch: Partial<AlertFields>) => void;
  problems: FieldProblem[];
}) {
  const id = useId();
  const [report, setReport] = useState<HealthReport | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [others, setOthers] = useState<Workflow[] | null>(null);
  const load = useCallback(async () => {
    setBusy(true);
    try {
      setReport(await api<HealthReport>('GET', `/workflows/${encodeURIComponent(workflowId)}/health`));
      setError(null);
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  }, [workflowId]);
  useEffect(() => {
    load();
    api<Page<Workflow>>('GET', `/workflows${qs({ limit: 100 })}`).then(
      (p) => setOthers(p.items.filter((w) => w.id !== workflowId)),
      () => setOthers([]),
    );
  }, [load, workflowId]);
  const errorAt = (field: string) =>
    problems
      .filter((p) => p.field === field)
      .map((p) => p.message)
      .join('; ');
  const number = (key: 'alertSilenceMinutes' | 'alertRejectionsPerMinute', label: string, field: string) => {
    const err = errorAt(field);
    return (
      <div className="field">
        <label htmlFor={`${id}-${key}`} className="label">
          {label}
        </label>
        <input
          id={`${id}-${key}`}
          className={`input${err ? ' invalid' : ''}`}
          inputMode="numeric"
          data-field={field}
          value={alerts[key]}
          placeholder="off"
          aria-invalid={err ? true : undefined}
          onChange={(e) => onChange({ [key]: e.target.value })}
        />
        {err && <p className="field-error">{err}</p>}
      </div>
    );
  };
  const codes = Object.entries(report?.refusalsByCode ?? {}).sort((a, b) => b[1] - a[1]);
  const refusals = codes.reduce((n, [, c]) => n + c, 0);

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <h2 id={`${id}-title`}>Trigger health</h2>
        <button type="button" className="button small" onClick={load} disabled={busy}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={error} />
      {report && (
        <>
          <dl className="health-figures">
            <div>
              <dt>Last call</dt>
              <dd title={report.lastCallAt ? formatTime(report.lastCallAt) : undefined}>
                {report.lastCallAt ? formatAgo(report.lastCallAt) : 'none yet'}
              </dd>
            </div>
            <div>
              <dt>Calls, 24 h</dt>
              <dd>
                {report.callsLast24Hours}
                {report.callsLast24Hours >= 24 && (
                  <span className="muted small"> (~{Math.round(report.callsLast24Hours / 24)} an hour)</span>
                )}
              </dd>
            </div>
            <div>
              <dt>Refused, 24 h</dt>
              <dd>{refusals}</dd>
            </div>
          </dl>
          <HourChart hours={report.hours} />
          {codes.length > 0 && (
            <p className="small">
              Refused by code:{' '}
              {codes.map(([code, count], i) => (
                <span key={code}>
                  {i > 0 && ', '}
                  <code>{code}</code> {count}
                </span>
              ))}
            </p>
          )}
          {report.alerts.length > 0 && (
            <ListTable
              actions={false}
              caption="Alerts raised, newest first"
              columns={['When', 'Alert', 'Run']}
            >
              {report.alerts.map((a) => (
                <tr key={`${a.kind}-${a.firedAt}-${JSON.stringify(a.details)}`}>
                  <td title={formatTime(a.firedAt)}>{formatAgo(a.firedAt)}</td>
                  <td>
                    <strong>{KIND_LABELS[a.kind] ?? a.kind}</strong>
                    <br />
                    <span className="small">{describeAlert(a.kind, a.details)}</span>
                  </td>
                  <td>
                    {a.executionId ? (
                      <Link to={`/executions/${encodeURIComponent(a.executionId)}`}>Open</Link>
                    ) : (
                      <span className="muted small">none</span>
                    )}
                  </td>
                </tr>
              ))}
            </ListTable>
          )}
        </>
      )}

      <h3>Alerts</h3>
      <ReferenceSelect
        label="Alert workflow"
        value={alerts.alertWorkflowId}
        onChange={(alertWorkflowId) => onChange({ alertWorkflowId })}
        field="/trigger/alerts/workflowId"
        error={errorAt('/trigger/alerts/workflowId') || errorAt('/trigger/alerts')}
        options={others?.map((w) => [w.id, w.name]) ?? null}
        unknownLabel="Unknown workflow"
        help={
          <>
            Runs (mode <code>alert</code>, active or not) with <code>alert.kind</code>,{' '}
            <code>alert.workflowName</code>, <code>alert.since</code> and <code>alert.details</code>, once per
            episode — e.g. to page someone on Slack.
          </>
        }
      />
      {alerts.alertWorkflowId && (
        <div className="subfields">
          {number(
            'alertSilenceMinutes',
            'Alert after minutes without a call',
            '/trigger/alerts/silenceMinutes',
          )}
          {number(
            'alertRejectionsPerMinute',
            'Alert at refused calls per minute',
            '/trigger/alerts/rejectionsPerMinute',
          )}
          <label className="check">
            <input
              type="checkbox"
              checked={alerts.alertSchemaDrift}
              onChange={(e) => onChange({ alertSchemaDrift: e.target.checked })}
            />
            Alert when a payload lacks, or changes the type of, a field the published steps read
          </label>
        </div>
      )}
    </section>
  );
}

/** The last 24 hours as bars: accepted calls, and refused ones stacked on them in the error colour. */
function HourChart({ hours }: { hours: HealthReport['hours'] }) {
  const max = Math.max(1, ...hours.map((h) => h.calls + h.refusals));
  const width = 240;
  const height = 48;
  const bar = width / hours.length;
  const total = hours.reduce((n, h) => n + h.calls + h.refusals, 0);
  return (
    <figure className="health-chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Calls per hour over the last 24 hours: ${total} in all, at most ${max} in an hour`}
        preserveAspectRatio="none"
      >
        {hours.map((h, i) => {
          const callsHeight = (h.calls / max) * height;
          const refusedHeight = (h.refusals / max) * height;
          return (
            <g key={h.hour}>
              <title>{`${formatTime(h.hour)}: ${h.calls} accepted, ${h.refusals} refused`}</title>
              <rect
                className="health-bar-calls"
                x={i * bar + 1}
                width={bar - 2}
                y={height - callsHeight}
                height={callsHeight}
              />
              <rect
                className="health-bar-refused"
                x={i * bar + 1}
                width={bar - 2}
                y={height - callsHeight - refusedHeight}
                height={refusedHeight}
              />
            </g>
          );
        })}
      </svg>
      <figcaption className="muted small">
        Calls per hour, last 24 hours (refused ones on top, in red)
      </figcaption>
    </figure>
  );
}

function describeAlert(kind: string, d: Record<string, unknown>): string {
  if (kind === 'silence')
    return `No call for ${d.silenceMinutes} minutes (last ${formatTime(String(d.lastCallAt))})`;
  if (kind === 'rejections') {
    const byCode = Object.entries((d.byCode as Record<string, number>) ?? {})
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
    return `${d.refusals} refused in a minute (${byCode})`;
  }
  if (kind === 'schemaDrift') {
    const steps = Array.isArray(d.steps) ? d.steps.join(', ') : '';
    const change = d.change === 'missing' ? 'missing' : `${d.expected} → ${d.actual}`;
    return `${d.field}: ${change}; read by ${steps}`;
  }
  return JSON.stringify(d);
}
