/**
 * Schedule rules shared by the server and the editor (SPEC 7f): which cron expressions and time
 * zones a schedule trigger takes, and when it fires. croner does the parsing, the next and previous
 * runs, the time zones and daylight saving time: a fixed-time job ("30 2 * * *") whose time falls in
 * a spring-forward gap runs at the first valid time after it, and once when an autumn hour repeats;
 * an interval job ("*\/30 * * * *") skips the gap and runs on both occurrences of the repeated hour.
 */
import { Cron } from 'croner';

export const DEFAULT_TIMEZONE = 'UTC';
export const MISSED_POLICIES = ['runOnce', 'skip'] as const;
export type MissedPolicy = (typeof MISSED_POLICIES)[number];

/** The nicknames croner knows, as a person writes them. */
export const CRON_NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly'] as const;

export interface ScheduleSpec {
  cron: string;
  timezone: string;
}

/** Why a time zone name is refused, or undefined when it is a real IANA zone. */
export function timezoneProblem(timezone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return undefined;
  } catch {
    return `"${timezone}" is not a time zone; use an IANA name such as Europe/Berlin or UTC`;
  }
}

/** Why a cron expression is refused (a phrase to follow the quoted expression), or undefined when it is fine. */
export function cronProblem(cron: string): string | undefined {
  const text = cron.trim();
  if (text.startsWith('@')) {
    return (CRON_NICKNAMES as readonly string[]).includes(text.toLowerCase())
      ? undefined
      : `is not a nickname croner knows; use one of ${CRON_NICKNAMES.join(', ')}`;
  }
  const fields = text.split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    return `has ${fields} field${fields === 1 ? '' : 's'}; write 5 (minute hour day month weekday) or 6 (seconds first)`;
  try {
    new Cron(text, { paused: true, mode: '5-or-6-parts' });
    return undefined;
  } catch (err) {
    return `is not a cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

/** The croner job of a valid spec (callers check cronProblem and timezoneProblem first). */
export function cronOf(spec: ScheduleSpec): Cron {
  const text = spec.cron.trim();
  return new Cron(text.startsWith('@') ? text.toLowerCase() : text, {
    paused: true,
    timezone: spec.timezone,
    ...(text.startsWith('@') ? {} : { mode: '5-or-6-parts' as const }),
  });
}

/** The next `n` ticks strictly after `after`. */
export function nextTicks(spec: ScheduleSpec, n: number, after: Date): Date[] {
  return cronOf(spec).nextRuns(n, after);
}

/** The first tick strictly after `after`, or null when the expression never fires again. */
export function nextTick(spec: ScheduleSpec, after: Date): Date | null {
  return cronOf(spec).nextRun(after);
}
