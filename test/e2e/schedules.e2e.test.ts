/**
 * Schedule workflows in the browser (SPEC 7f): the workflow list shows a schedule's cron, its
 * description and its next run (from the API's trigger.nextRunAt), searching the list works with
 * schedules in it; in the editor a new workflow becomes a schedule (the type switch asks first), its
 * cron is described and its next five runs follow the cron and the time zone as they are typed and
 * picked, an invalid cron is reported before Save, and once saved and activated the card and the
 * list show the next run. A schedule workflow opens as a schedule, with no webhook parts; a
 * scheduled execution's page says which tick it ran for.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nextTicks } from '../../src/shared/schedule.js';
import {
  axeViolations,
  DESKTOP,
  EMAIL,
  keepFailures,
  PASSWORD,
  PHONE,
  screenshot,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import { eventually, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ server, browser, page } = await startBrowserTest({ axe: true }));
}, 120_000);

afterAll(async () => {
  await stopBrowserTest({ browser, server });
});

afterEach(keepFailures('schedules', () => page));

describe('a schedule workflow in the UI', () => {
  it('is listed with its cron and next run, and opens in the editor', async () => {
    await page.goto(`${server.url}/#setup-code=${server.setupCode}`);
    await page.getByRole('heading', { name: 'Create the owner account' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();

    const created = await server.api('POST', '/api/v1/workflows', {
      name: 'Nightly catch-up',
      trigger: { type: 'schedule', cron: '0 2 * * *', timezone: 'Europe/Berlin' },
    });
    expect(created.status).toBe(201);
    const active = await server.api('POST', `/api/v1/workflows/${created.body.id}/activate`);
    const nextRunAt = active.body.trigger.nextRunAt as string;
    expect(nextRunAt).toMatch(/T0[01]:00:00\.000Z$/);
    await server.api('POST', '/api/v1/workflows', { name: 'Orders hook', trigger: { path: 'orders' } });

    await page.reload();
    const row = page.getByRole('row', { name: /Nightly catch-up/ });
    await expect.poll(() => row.innerText()).toContain('0 2 * * *');
    expect(await row.innerText()).toContain('next');
    // Searching the list reads every row's trigger, schedules included.
    await page.getByRole('searchbox').fill('orders');
    await expect.poll(() => page.getByRole('row', { name: /Orders hook/ }).count()).toBe(1);
    expect(await page.getByRole('row', { name: /Nightly catch-up/ }).count()).toBe(0);
    await page.getByRole('searchbox').fill('');
    // A copy is the same schedule, inactive until activated.
    await page.getByRole('button', { name: 'Duplicate Nightly catch-up' }).click();
    await page
      .getByText('Created "Copy of Nightly catch-up", not active: activate it to start its schedule.')
      .waitFor();
    const copy = page.getByRole('row', { name: /Copy of Nightly catch-up/ });
    expect(await copy.innerText()).toContain('0 2 * * *');
    expect(await copy.innerText()).not.toContain('next');

    await page.getByRole('link', { name: 'Nightly catch-up', exact: true }).click();
    await page.getByRole('heading', { name: 'Nightly catch-up' }).waitFor();
    // As a schedule, with nothing unsaved: not a webhook form whose empty path blocks Save.
    await page.getByRole('heading', { name: 'Schedule trigger' }).waitFor();
    expect(await page.getByLabel('Cron').inputValue()).toBe('0 2 * * *');
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
  }, 60_000);
});

describe('making a scheduled workflow in the editor', () => {
  const nextRuns = () => page.getByTestId('next-runs').innerText();
  const description = () => page.getByTestId('cron-description').innerText();

  it('from an empty workflow: schedule, cron, description, next runs, time zone, save, activate', async () => {
    await signInAsOwner(page, server);
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('Nightly report');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Webhook trigger' }).waitFor();
    expect(await page.getByRole('button', { name: /Listen/ }).count()).toBeGreaterThan(0);

    // Leaving the saved type asks first; keeping it changes nothing.
    await page.getByRole('radio', { name: 'Schedule' }).click();
    const ask = page.getByRole('dialog', { name: 'Start on a schedule instead?' });
    await ask.waitFor();
    expect(await ask.innerText()).toContain('drops the webhook’s settings');
    await ask.getByRole('button', { name: 'Keep the webhook' }).click();
    expect(await page.getByRole('radio', { name: 'Webhook' }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: 'Schedule' }).click();
    await ask.getByRole('button', { name: 'Switch to schedule' }).click();
    await page.getByRole('heading', { name: 'Schedule trigger' }).waitFor();

    // The webhook's parts are gone: no URLs, no listening, no path or auth.
    expect(await page.getByRole('button', { name: /Listen/ }).count()).toBe(0);
    expect(await page.getByLabel('Path').count()).toBe(0);
    expect(await page.getByLabel('Authentication').count()).toBe(0);
    expect(await page.getByText('/webhook-test/').count()).toBe(0);
    // The browser's zone is the default (this browser runs in UTC).
    expect(await page.getByLabel('Time zone').inputValue()).toBe('UTC');
    expect(await nextRuns()).toContain('Type a valid cron');

    await page.getByLabel('Cron').fill('0 2 * * *');
    await expect.poll(description).toBe('At 02:00');
    const runs = page.getByTestId('next-runs').getByRole('listitem');
    await expect.poll(() => runs.count()).toBe(5);
    const expected = nextTicks({ cron: '0 2 * * *', timezone: 'UTC' }, 5, new Date());
    expect(await runs.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).toEqual(
      expected.map((d) => d.toISOString()),
    );
    expect(await runs.first().innerText()).toContain('02:00:00');

    const daily = await nextRuns();
    await page.getByLabel('Cron').fill('30 6 * * MON-FRI');
    await expect.poll(description).toBe('At 06:30, Monday through Friday');
    await expect.poll(nextRuns).not.toBe(daily);
    expect(await runs.count()).toBe(5);
    for (const text of await runs.allInnerTexts()) expect(text).toMatch(/^(Mon|Tue|Wed|Thu|Fri).*06:30:00/);

    // Another zone: the same wall-clock time, other instants.
    const inUtc = await runs.locator('time').first().getAttribute('datetime');
    await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
    await expect.poll(() => runs.locator('time').first().getAttribute('datetime')).not.toBe(inUtc);
    const tokyo = nextTicks({ cron: '30 6 * * MON-FRI', timezone: 'Asia/Tokyo' }, 5, new Date());
    expect(await runs.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).toEqual(
      tokyo.map((d) => d.toISOString()),
    );
    expect(await runs.first().innerText()).toContain('06:30:00');

    await page.getByRole('radio', { name: 'Skip' }).check();
    expect(await page.getByText('missed times are dropped').isVisible()).toBe(true);
    expect(await axeViolations(page), 'schedule form').toEqual([]);
    await screenshot(page, 'schedule-editor', DESKTOP);

    // An invalid cron: said at the field as it is typed, and Save is refused with the same words.
    await page.getByLabel('Cron').fill('61 6 * * *');
    await expect.poll(description).toContain('"61 6 * * *" is not a cron expression');
    expect(await nextRuns()).toContain('Type a valid cron');
    expect(await page.getByLabel('Cron').getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const notSaved = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await notSaved.waitFor();
    expect(await notSaved.innerText()).toContain('is not a cron expression');
    const unsaved = await server.api('GET', '/api/v1/workflows?limit=100');
    const id = (unsaved.body.items as { id: string; name: string }[]).find(
      (w) => w.name === 'Nightly report',
    )!.id;
    expect((await server.api('GET', `/api/v1/workflows/${id}`)).body.trigger.type).toBe('webhook');

    await page.getByLabel('Cron').fill('30 6 * * MON-FRI');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    const saved = (await server.api('GET', `/api/v1/workflows/${id}`)).body;
    expect(saved.trigger).toEqual({
      type: 'schedule',
      cron: '30 6 * * MON-FRI',
      timezone: 'Asia/Tokyo',
      missed: 'skip',
      nextRunAt: null,
    });
    const card = page.getByTestId('trigger-card');
    expect(await card.innerText()).toContain('At 06:30, Monday through Friday (Asia/Tokyo)');
    expect(await card.innerText()).toContain('runs only while active');

    await page.getByRole('switch', { name: 'Activated' }).click();
    await expect.poll(() => card.innerText()).toContain('next run');
    const active = (await server.api('GET', `/api/v1/workflows/${id}`)).body;
    expect(active.active).toBe(true);
    expect(active.trigger.nextRunAt).toBe(
      nextTicks({ cron: '30 6 * * MON-FRI', timezone: 'Asia/Tokyo' }, 1, new Date())[0]!.toISOString(),
    );

    // Opened again, it is a schedule with nothing to save (not a webhook form with an empty path).
    await page.reload();
    await page.getByRole('heading', { name: 'Schedule trigger' }).waitFor();
    expect(await page.getByLabel('Cron').inputValue()).toBe('30 6 * * MON-FRI');
    expect(await page.getByRole('radio', { name: 'Skip' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    expect(await card.innerText()).toContain('next run');

    // On a phone the card opens the schedule form as a sheet.
    await page.setViewportSize(PHONE);
    // The phone layout first (no side panel), so the click opens the sheet rather than the panel.
    await page.locator('.side-panel').waitFor({ state: 'detached' });
    await card.click();
    await page.getByRole('heading', { name: 'Schedule trigger' }).waitFor();
    expect(await page.getByLabel('Cron').inputValue()).toBe('30 6 * * MON-FRI');
    expect(await page.getByTestId('next-runs').getByRole('listitem').count()).toBe(5);
    expect(await axeViolations(page), 'schedule form on a phone').toEqual([]);
    await page.getByRole('button', { name: 'Back to the steps' }).click();
    await page.setViewportSize(DESKTOP);

    await page.getByRole('link', { name: '← Workflows' }).click();
    const row = page.getByRole('row', { name: /Nightly report/ });
    await expect.poll(() => row.innerText()).toContain('30 6 * * MON-FRI');
    expect(await row.innerText()).toContain('At 06:30, Monday through Friday');
    expect(await row.innerText()).toContain('next');
  }, 90_000);
});

describe("a schedule's execution", () => {
  it('says which tick it ran for', async () => {
    await signInAsOwner(page, server);
    const wf = (
      await server.api('POST', '/api/v1/workflows', {
        name: 'Every second',
        trigger: { type: 'schedule', cron: '* * * * * *' },
        steps: [{ name: 'stamp', type: 'set', fields: { at: '{{ scheduledAt }}' } }],
      })
    ).body;
    await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    // Ticks come each second on the real clock; the first may wait for the scheduler to take it up.
    const first = await eventually(async () => {
      const res = await server.api('GET', `/api/v1/executions?workflowId=${wf.id}&status=succeeded&limit=1`);
      return res.body.items[0] as { id: string } | undefined;
    }, 15_000);
    await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);

    await page.goto(`${server.url}/executions/${first.id}`);
    const heading = page.getByRole('heading', { name: /Trigger item/ });
    await expect.poll(() => heading.innerText(), { timeout: 5_000 }).toContain('scheduled for');
    expect(await heading.innerText()).not.toContain('received');
  }, 60_000);
});
