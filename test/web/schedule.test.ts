/**
 * The editor's schedule trigger (SPEC 7f): a saved schedule opens as a schedule (not as a webhook
 * form with an empty path), round-trips unchanged, sends only its own keys, and is checked before
 * Save with the server's words; the cron in words and the next runs in the chosen time zone.
 */
import { describe, expect, it } from 'vitest';
import type { FieldProblem } from '../../web/src/api.js';
import { draftFrom, normalizedPath, payloadFrom, triggerFrom } from '../../web/src/lib/draft.js';
import { publishState, savedNotice, versionContent } from '../../web/src/lib/publishing.js';
import {
  describeCron,
  formatInZone,
  nextTickItem,
  scheduleCronProblem,
  timeZones,
  upcomingRuns,
} from '../../web/src/lib/schedule.js';
import type { Workflow } from '../../web/src/types.js';

function scheduled(trigger: Partial<Workflow['trigger']> = {}): Workflow {
  return {
    id: 'wf-s',
    name: 'Nightly catch-up',
    active: true,
    version: 2,
    publishedVersion: 2,
    trigger: {
      type: 'schedule',
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      missed: 'skip',
      nextRunAt: '2026-11-28T01:00:00.000Z',
      ...trigger,
    } as Workflow['trigger'],
    steps: [{ name: 'fetch', type: 'set', fields: { since: '{{ scheduledAt }}' } }],
    settings: {},
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
  };
}

describe('a schedule workflow in the editor', () => {
  it('opens as a schedule and gives back exactly its trigger, without problems', () => {
    const draft = draftFrom(scheduled());
    expect(draft.trigger).toMatchObject({
      type: 'schedule',
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      missed: 'skip',
    });
    const { body, problems } = payloadFrom(draft);
    expect(problems).toEqual([]);
    expect(body.trigger).toEqual({
      type: 'schedule',
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      missed: 'skip',
    });
  });

  it('switched to a webhook, starts from a valid random path (Save is not blocked)', () => {
    const draft = draftFrom(scheduled());
    const { body, problems } = payloadFrom({ ...draft, trigger: { ...draft.trigger, type: 'webhook' } });
    expect(problems).toEqual([]);
    expect(body.trigger.type).toBeUndefined();
    expect(body.trigger.cron).toBeUndefined();
    expect(body.trigger.path).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(normalizedPath(body.trigger.path!)).toBe(body.trigger.path);
  });

  it('a webhook switched to a schedule sends only the schedule, in the browser’s zone by default', () => {
    const hook = draftFrom({
      ...scheduled(),
      trigger: { type: 'webhook', methods: ['POST'], path: 'x' } as never,
    });
    expect(hook.trigger.type).toBe('webhook');
    expect(hook.trigger.timezone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    const problems: FieldProblem[] = [];
    const trigger = triggerFrom({ ...hook.trigger, type: 'schedule', cron: ' @hourly ' }, problems);
    expect(problems).toEqual([]);
    expect(trigger).toEqual({
      type: 'schedule',
      cron: '@hourly',
      timezone: hook.trigger.timezone,
      missed: 'runOnce',
    });
  });

  it.each([
    ['', 'needs a cron expression'],
    ['* * * *', '"* * * *" has 4 fields; write 5'],
    ['61 * * * *', '"61 * * * *" is not a cron expression'],
    ['@sometimes', 'is not a nickname'],
  ])('refuses the cron %j before Save, as the server words it', (cron, words) => {
    const draft = draftFrom(scheduled({ cron }));
    const { problems } = payloadFrom(draft);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.field).toBe('/trigger/cron');
    expect(problems[0]!.message).toContain(words);
    expect(scheduleCronProblem(cron)).toBe(problems[0]!.message);
  });

  it('refuses a time zone that is not one', () => {
    const { problems } = payloadFrom(draftFrom(scheduled({ timezone: 'Mars/Olympus' })));
    expect(problems).toEqual([
      { field: '/trigger/timezone', message: expect.stringContaining('not a time zone') },
    ]);
  });
});

describe('what the schedule form shows', () => {
  it.each([
    ['0 2 * * *', 'At 02:00'],
    ['*/10 * * * * *', 'Every 10 seconds'],
    ['@HOURLY', 'Every hour'],
    ['0 9 * * MON-FRI', 'At 09:00, Monday through Friday'],
    ['61 * * * *', undefined],
  ])('describes %j as %j', (cron, words) => {
    expect(describeCron(cron)).toBe(words);
  });

  it('lists the next runs in the chosen zone, and they move with it', () => {
    const now = new Date('2026-11-27T03:00:00Z');
    const berlin = upcomingRuns('0 2 * * *', 'Europe/Berlin', 5, now);
    expect(berlin.map((d) => d.toISOString())).toEqual([
      '2026-11-28T01:00:00.000Z',
      '2026-11-29T01:00:00.000Z',
      '2026-11-30T01:00:00.000Z',
      '2026-12-01T01:00:00.000Z',
      '2026-12-02T01:00:00.000Z',
    ]);
    const tokyo = upcomingRuns('0 2 * * *', 'Asia/Tokyo', 5, now);
    expect(tokyo[0]!.toISOString()).toBe('2026-11-27T17:00:00.000Z');
    expect(formatInZone(tokyo[0]!, 'Asia/Tokyo')).toMatch(/02:00:00/);
    expect(formatInZone(berlin[0]!, 'Europe/Berlin')).toMatch(/02:00:00/);
    expect(upcomingRuns('61 * * * *', 'UTC', 5, now)).toEqual([]);
    expect(upcomingRuns('0 2 * * *', 'Mars/Olympus', 5, now)).toEqual([]);
  });

  it('previews the steps with the item of the next tick (a schedule has no test events)', () => {
    const now = new Date('2026-11-27T03:00:00Z');
    expect(nextTickItem('0 2 * * *', 'Europe/Berlin', now)).toEqual({
      scheduledAt: '2026-11-28T01:00:00.000Z',
      firedAt: '2026-11-28T01:00:00.000Z',
      executionMode: 'production',
    });
    expect(nextTickItem('nope', 'UTC', now)).toBeUndefined();
  });

  it('offers every zone the runtime knows, UTC and a saved zone included', () => {
    const zones = timeZones('Etc/GMT+5');
    expect(zones).toContain('UTC');
    expect(zones).toContain('Europe/Berlin');
    expect(zones).toContain('Etc/GMT+5');
    expect(zones).toEqual([...zones].sort());
  });

  it('speaks of scheduled runs, not URLs, in the publish state and save notices', () => {
    const off = { active: false, version: 3, publishedVersion: 2, trigger: { type: 'schedule' as const } };
    expect(publishState(off).detail).toContain('Nothing runs on schedule');
    expect(savedNotice(off)).toContain('nothing runs on schedule');
    expect(publishState({ ...off, active: true }).detail).toContain('The schedule runs v2');
    expect(publishState({ ...off, active: true, publishedVersion: 3 }).detail).toContain(
      'The schedule runs v3',
    );
    expect(publishState({ ...off, trigger: { type: 'webhook' } }).detail).toContain('test URL');
    // The next run is computed, not content: it is left out of what publishing compares.
    expect(versionContent(scheduled()).trigger).not.toHaveProperty('nextRunAt');
  });
});
