import { useEffect, useId, useMemo, useState } from 'react';
import type { FieldProblem } from '../../api';
import { RadioChoices } from '../../components/RadioChoices';
import type { TriggerDraft } from '../../lib/draft';
import {
  describeCron,
  formatInZone,
  scheduleCronProblem,
  timeZones,
  timezoneProblem,
  upcomingRuns,
} from '../../lib/schedule';
import type { MissedPolicy } from '../../../../src/shared/schedule';

const MISSED: { value: MissedPolicy; label: string; help: string }[] = [
  {
    value: 'runOnce',
    label: 'Run once',
    help: 'After hookflow was down, one execution catches up for the latest missed time.',
  },
  {
    value: 'skip',
    label: 'Skip',
    help: 'After hookflow was down, missed times are dropped; the next run is the next time.',
  },
];

const EXAMPLES = ['*/5 * * * *', '0 2 * * *', '0 9 * * MON-FRI', '@hourly'];

/** The next runs shown below the cron; they move on as the clock passes them. */
const NEXT_RUNS = 5;

function problemAt(problems: FieldProblem[], field: string): string | undefined {
  const found = problems.filter((p) => p.field === field);
  return found.length > 0 ? found.map((p) => p.message).join('; ') : undefined;
}

/**
 * A schedule trigger's settings (SPEC 7f): the cron (checked and put in words as you type), the
 * next five runs in the chosen time zone, the time zone, and what happens to times missed while
 * hookflow was down.
 */
export function ScheduleFields({
  trigger,
  onChange,
  problems,
}: {
  trigger: TriggerDraft;
  onChange: (patch: Partial<TriggerDraft>) => void;
  problems: FieldProblem[];
}) {
  const id = useId();
  // A cron being typed is judged at once; a server's message stays until the field is edited.
  const liveCronError = trigger.cron.trim() === '' ? undefined : scheduleCronProblem(trigger.cron);
  const cronError = liveCronError ?? problemAt(problems, '/trigger/cron');
  const zoneError = timezoneProblem(trigger.timezone) ?? problemAt(problems, '/trigger/timezone');
  const description = describeCron(trigger.cron);
  const now = useMinute();
  const runs = useMemo(
    () => upcomingRuns(trigger.cron, trigger.timezone, NEXT_RUNS, now),
    [trigger.cron, trigger.timezone, now],
  );
  const zones = useMemo(() => timeZones(trigger.timezone), [trigger.timezone]);

  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-cron`} className="label">
          Cron
        </label>
        <input
          id={`${id}-cron`}
          data-field="/trigger/cron"
          className={`input mono${cronError ? ' invalid' : ''}`}
          value={trigger.cron}
          spellCheck={false}
          autoComplete="off"
          placeholder="0 2 * * *"
          aria-invalid={cronError ? true : undefined}
          aria-describedby={`${id}-cron-help ${id}-cron-says`}
          onChange={(e) => onChange({ cron: e.target.value })}
        />
        <p id={`${id}-cron-help`} className="help">
          5 fields (minute hour day month weekday), 6 with seconds first, or a nickname (@hourly, @daily,
          @weekly, @monthly, @yearly). E.g.{' '}
          {EXAMPLES.map((e, i) => (
            <span key={e}>
              {i > 0 && ', '}
              <code>{e}</code>
            </span>
          ))}
          .
        </p>
        <p id={`${id}-cron-says`} role="status" data-testid="cron-description">
          {cronError ? (
            <span className="field-error">{cronError}</span>
          ) : description ? (
            <strong>{description}</strong>
          ) : null}
        </p>
      </div>

      <div className="field">
        <label htmlFor={`${id}-zone`} className="label">
          Time zone
        </label>
        <select
          id={`${id}-zone`}
          data-field="/trigger/timezone"
          className={`input${zoneError ? ' invalid' : ''}`}
          value={trigger.timezone}
          aria-describedby={`${id}-zone-help`}
          onChange={(e) => onChange({ timezone: e.target.value })}
        >
          {zones.map((z) => (
            <option key={z} value={z}>
              {z.replaceAll('_', ' ')}
            </option>
          ))}
        </select>
        <p id={`${id}-zone-help`} className="help">
          The cron reads the clock of this zone, daylight saving time included.
        </p>
        {zoneError && <p className="field-error">{zoneError}</p>}
      </div>

      <section className="field" aria-labelledby={`${id}-runs`}>
        <h3 id={`${id}-runs`} className="label">
          Next {NEXT_RUNS} runs
        </h3>
        {runs.length > 0 ? (
          <ol className="next-runs mono small" data-testid="next-runs">
            {runs.map((r) => (
              <li key={r.toISOString()}>
                <time dateTime={r.toISOString()}>{formatInZone(r, trigger.timezone)}</time>
              </li>
            ))}
          </ol>
        ) : (
          <p className="muted small" data-testid="next-runs">
            {cronError || trigger.cron.trim() === ''
              ? 'Type a valid cron to see when it runs.'
              : 'This cron never runs again.'}
          </p>
        )}
        <p className="help">Runs happen while the workflow is active, with its published version.</p>
      </section>

      <RadioChoices
        legend="Missed runs"
        options={MISSED}
        value={trigger.missed}
        help={MISSED.find((m) => m.value === trigger.missed)?.help}
        onChange={(missed) => onChange({ missed })}
      />
    </>
  );
}

/** The current time, renewed each minute, so the next runs move on while the editor is open. */
function useMinute(): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
