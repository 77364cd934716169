import type { TriggerDraft } from '../../lib/draft';
import { formatTime } from '../../lib/format';
import { describeCron } from '../../lib/schedule';

const AUTH_NAMES: Record<string, string> = {
  none: 'no auth',
  basic: 'basic auth',
  header: 'header auth',
  jwt: 'JWT',
  hmac: 'HMAC signature',
};

const RESPONSE_NAMES: Record<string, string> = {
  immediately: 'answers at once',
  lastStep: 'answers with the last step',
  respondStep: 'answers from a Respond step',
};

/**
 * The first card of the flow: what starts the workflow, in one line. Choosing it (click or Enter)
 * shows the trigger's details — URLs, test events, method, path, auth, options; for a schedule its
 * cron and next runs — in the side panel, or as a full-screen sheet on a narrow screen.
 */
export function TriggerCard({
  trigger,
  path,
  listening,
  captured,
  selected,
  controls,
  invalid,
  nextRunAt,
  onSelect,
}: {
  trigger: TriggerDraft;
  /** A schedule's next run as the API says (null while inactive). */
  nextRunAt?: string | null;
  path: string;
  listening: boolean;
  /** A summary of the test event on screen, if any. */
  captured: string | undefined;
  selected: boolean;
  /** Some of the trigger's fields need fixing (they are listed in the panel). */
  invalid: boolean;
  /** The id of the panel the card opens. */
  controls: string | undefined;
  onSelect: () => void;
}) {
  return (
    <div className="flow-card trigger-card">
      <button
        type="button"
        className={`flow-card-button${selected ? ' selected' : ''}${invalid ? ' invalid' : ''}`}
        aria-expanded={controls ? selected : undefined}
        aria-controls={controls}
        data-testid="trigger-card"
        onClick={onSelect}
      >
        {trigger.type === 'schedule' ? (
          <>
            <span className="flow-card-kind">Trigger · Schedule</span>
            <span className="flow-card-title mono">{trigger.cron.trim() || 'no cron yet'}</span>
            <span className="flow-card-detail small muted" data-testid="trigger-schedule">
              {describeCron(trigger.cron) ?? 'not a valid cron'} ({trigger.timezone})
              {nextRunAt ? ` · next run ${formatTime(nextRunAt)}` : ' · runs only while active'}
            </span>
          </>
        ) : (
          <>
            <span className="flow-card-kind">Trigger · Webhook</span>
            <span className="flow-card-title mono">
              {trigger.methods.join(', ')} /webhook/{path}
            </span>
            <span className="flow-card-detail small muted">
              {AUTH_NAMES[trigger.auth.type] ?? trigger.auth.type}, {RESPONSE_NAMES[trigger.responseMode]}
              {listening ? ' · listening for a test event' : captured ? ` · test event: ${captured}` : ''}
            </span>
          </>
        )}
        {invalid && <span className="flow-card-problem small">Some trigger fields need fixing</span>}
        <span className="flow-card-open small">
          {trigger.type === 'schedule' ? 'Cron, time zone and next runs' : 'URLs, test events and settings'}
        </span>
      </button>
    </div>
  );
}
