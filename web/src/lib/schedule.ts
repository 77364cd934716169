/**
 * A schedule trigger (SPEC 7f) as people read it: the cron in words (cronstrue), the next runs in
 * the schedule's time zone, and the same checks the server makes (src/shared/schedule.ts, croner),
 * so that a cron the server would refuse is reported before Save.
 */
import cronstrue from 'cronstrue';
import { cronProblem, nextTicks, timezoneProblem } from '../../../src/shared/schedule';
import type { TriggerItem } from '../types';
import { DATE_TIME } from './format';

/** The time zone the browser runs in: the default of a new schedule. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** The IANA zones the browser knows, with UTC and `current` (a zone saved elsewhere) always in. */
export function timeZones(current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [...new Set([...known, 'UTC', current])].filter((z) => z !== '').sort();
}

/** Why the server would refuse this cron, in its words; undefined when it takes it. */
export function scheduleCronProblem(cron: string): string | undefined {
  const text = cron.trim();
  if (text === '') return 'needs a cron expression, e.g. "*/5 * * * *" or "@hourly"';
  const problem = cronProblem(text);
  return problem ? `"${text}" ${problem}` : undefined;
}

export { timezoneProblem };

/** The cron in words ("At 02:00, Monday through Friday"); undefined for a cron that is not valid. */
export function describeCron(cron: string): string | undefined {
  const text = cron.trim();
  if (scheduleCronProblem(text) !== undefined) return undefined;
  try {
    return cronstrue.toString(text.startsWith('@') ? text.toLowerCase() : text, {
      use24HourTimeFormat: true,
      throwExceptionOnParseError: true,
    });
  } catch {
    return undefined;
  }
}

/** The next `n` runs after `now`; empty when the cron or the zone is not valid. */
export function upcomingRuns(cron: string, timezone: string, n: number, now: Date): Date[] {
  if (scheduleCronProblem(cron) !== undefined || timezoneProblem(timezone) !== undefined) return [];
  return nextTicks({ cron: cron.trim(), timezone }, n, now);
}

/** A run time as the clock in `timezone` shows it: "Mon 30 Nov 2026, 02:00:00 CET". */
export function formatInZone(date: Date, timezone: string): string {
  return date.toLocaleString(undefined, {
    ...DATE_TIME,
    timeZone: timezone,
    weekday: 'short',
    timeZoneName: 'short',
  });
}

/**
 * The item the next tick would start an execution with (SPEC 7f): a schedule has no test events,
 * so its steps are previewed, and its fields offered, with this one. Undefined for an invalid cron.
 */
export function nextTickItem(cron: string, timezone: string, now: Date): TriggerItem | undefined {
  const [next] = upcomingRuns(cron, timezone, 1, now);
  if (!next) return undefined;
  const at = next.toISOString();
  return { scheduledAt: at, firedAt: at, executionMode: 'production' };
}
