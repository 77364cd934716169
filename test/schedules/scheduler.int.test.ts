/**
 * The scheduler on a real SQLite store with a fake clock: ticks across daylight saving time in a
 * time zone, ticks missed while no scheduler ran (runOnce / skip), two schedulers on one store
 * claiming each tick once, and a schedule that stops when it is no longer live.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalBus } from '../../src/bus/bus.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { Scheduler } from '../../src/schedules/scheduler.js';
import { openStore } from '../../src/store/open.js';
import { schedulesRepo } from '../../src/store/schedules.js';
import type { ScheduleRow } from '../../src/store/schema.js';
import type { Store } from '../../src/store/store.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const log = createLogger('silent', 2);
let store: Store;
let dataDir: string;
const schedulers: Scheduler[] = [];

beforeEach(async () => {
  dataDir = tempDir();
  store = await openStore(loadConfig({ env: { HOOKFLOW_DATA_DIR: dataDir } }).store, log);
});

afterEach(async () => {
  for (const s of schedulers.splice(0)) await s.close();
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function live(row: Partial<ScheduleRow> & Pick<ScheduleRow, 'cron' | 'since'>): Promise<ScheduleRow> {
  const full: ScheduleRow = { workflow_id: 'wf-1', version: 1, timezone: 'UTC', missed: 'runOnce', ...row };
  await schedulesRepo.put(store.db, full);
  return full;
}

async function startScheduler(clock: FakeClock): Promise<Scheduler> {
  const s = new Scheduler({ store, bus: new LocalBus(), log, clock });
  schedulers.push(s);
  await s.start();
  return s;
}

/** The scheduledAt of every execution started, in order, and their items. */
async function ticks(): Promise<string[]> {
  const rows = await store.db
    .selectFrom('executions')
    .select(['trigger', 'mode', 'workflow_version'])
    .orderBy('id')
    .execute();
  for (const r of rows) expect(r.mode).toBe('production');
  return rows.map((r) => (JSON.parse(r.trigger) as { scheduledAt: string }).scheduledAt).sort();
}

describe('daylight saving time (Europe/Berlin)', () => {
  it('a fixed-time job runs once a day: at 03:00 when 02:30 does not exist, once when 02:30 repeats', async () => {
    const clock = new FakeClock('2027-03-26T12:00:00Z');
    await live({ cron: '30 2 * * *', timezone: 'Europe/Berlin', since: '2027-03-26T12:00:00.000Z' });
    const s = await startScheduler(clock);
    await clock.advanceTo('2027-03-30T12:00:00Z', () => s.settled());
    // 02:30 CET = 01:30Z; on the 28th clocks jump 02:00 → 03:00 CEST: the run is at 03:00 CEST (01:00Z).
    expect(await ticks()).toEqual([
      '2027-03-27T01:30:00.000Z',
      '2027-03-28T01:00:00.000Z',
      '2027-03-29T00:30:00.000Z',
      '2027-03-30T00:30:00.000Z',
    ]);
    await s.close();
    await store.db.deleteFrom('executions').execute();
    await store.db.deleteFrom('schedule_ticks').execute();

    // Autumn: 03:00 CEST → 02:00 CET on 31 October; 02:30 happens twice and runs once.
    const autumn = new FakeClock('2027-10-29T12:00:00Z');
    await live({ cron: '30 2 * * *', timezone: 'Europe/Berlin', since: '2027-10-29T12:00:00.000Z' });
    const s2 = await startScheduler(autumn);
    await autumn.advanceTo('2027-11-01T12:00:00Z', () => s2.settled());
    expect(await ticks()).toEqual([
      '2027-10-30T00:30:00.000Z',
      '2027-10-31T00:30:00.000Z',
      '2027-11-01T01:30:00.000Z',
    ]);
  });

  it('an interval job keeps its interval through the repeated hour (both 02:30s run)', async () => {
    const clock = new FakeClock('2027-10-30T23:50:00Z');
    await live({ cron: '*/30 * * * *', timezone: 'Europe/Berlin', since: '2027-10-30T23:50:00.000Z' });
    const s = await startScheduler(clock);
    await clock.advanceTo('2027-10-31T02:10:00Z', () => s.settled());
    // 02:00 CEST, 02:30 CEST, 02:00 CET, 02:30 CET, 03:00 CET: every 30 minutes of real time.
    expect(await ticks()).toEqual([
      '2027-10-31T00:00:00.000Z',
      '2027-10-31T00:30:00.000Z',
      '2027-10-31T01:00:00.000Z',
      '2027-10-31T01:30:00.000Z',
      '2027-10-31T02:00:00.000Z',
    ]);
  });
});

describe('ticks missed while no scheduler ran', () => {
  it.each([
    ['runOnce', ['2027-01-01T00:01:00.000Z', '2027-01-01T00:02:00.000Z', '2027-01-01T00:09:00.000Z']],
    ['skip', ['2027-01-01T00:01:00.000Z', '2027-01-01T00:02:00.000Z']],
  ] as const)('%s', async (missed, expected) => {
    const clock = new FakeClock('2027-01-01T00:00:00Z');
    await live({ cron: '* * * * *', missed, since: '2027-01-01T00:00:00.000Z' });
    const first = await startScheduler(clock);
    await clock.advanceTo('2027-01-01T00:02:30Z', () => first.settled());
    await first.close();
    // Down from 00:02:30 to 00:09:30: the ticks 00:03 … 00:09 were missed.
    clock.jump('2027-01-01T00:09:30Z');
    const second = await startScheduler(clock);
    expect(await ticks()).toEqual(expected);
    // Then it goes on as usual.
    await clock.advanceTo('2027-01-01T00:11:00Z', () => second.settled());
    expect(await ticks()).toEqual([...expected, '2027-01-01T00:10:00.000Z', '2027-01-01T00:11:00.000Z']);
  });

  it('a schedule that went live while no scheduler ran is not behind: nothing before it is missed', async () => {
    const clock = new FakeClock('2027-01-01T01:00:30Z');
    await live({ cron: '* * * * *', since: '2027-01-01T00:00:00.000Z' });
    await store.db
      .insertInto('schedule_ticks')
      .values({
        workflow_id: 'wf-1',
        scheduled_at: '2027-01-01T00:30:00.000Z',
        execution_id: 'x',
        fired_at: '2027-01-01T00:30:00.000Z',
      })
      .execute();
    // Re-published with a new cron at 01:00:10: the old ticks are not this cron's.
    await live({ cron: '*/5 * * * * *', since: '2027-01-01T01:00:10.000Z' });
    clock.jump('2027-01-01T01:00:12Z');
    const s = await startScheduler(clock);
    await clock.advanceTo('2027-01-01T01:00:21Z', () => s.settled());
    expect(await ticks()).toEqual(['2027-01-01T01:00:15.000Z', '2027-01-01T01:00:20.000Z']);
  });
});

describe('more than one scheduler', () => {
  it('two schedulers on one store start one execution per tick, none missing', async () => {
    const clock = new FakeClock('2027-01-01T00:00:00Z');
    await live({ cron: '* * * * * *', since: '2027-01-01T00:00:00.000Z' });
    const a = await startScheduler(clock);
    const b = await startScheduler(clock);
    const both = async () => {
      await a.settled();
      await b.settled();
    };
    await clock.advanceTo('2027-01-01T00:00:30Z', both);
    const expected = Array.from({ length: 30 }, (_, i) =>
      new Date(Date.parse('2027-01-01T00:00:01Z') + i * 1000).toISOString(),
    );
    expect(await ticks()).toEqual(expected);
  });

  it('a schedule no longer live stops at once, even before its scheduler hears of it', async () => {
    const clock = new FakeClock('2027-01-01T00:00:00Z');
    await live({ cron: '* * * * * *', since: '2027-01-01T00:00:00.000Z' });
    const s = await startScheduler(clock);
    await clock.advanceTo('2027-01-01T00:00:03Z', () => s.settled());
    expect(await ticks()).toHaveLength(3);
    // Deactivated by another process: the notice has not come (a bus of its own), the store says so.
    await schedulesRepo.delete(store.db, 'wf-1');
    await clock.advanceTo('2027-01-01T00:00:10Z', () => s.settled());
    expect(await ticks()).toHaveLength(3);
    expect(s.size).toBe(0);
  });
});
