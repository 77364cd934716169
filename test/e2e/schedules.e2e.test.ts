/**
 * Schedule workflows in the browser (SPEC 7f), as far as the UI goes today: the workflow list
 * shows a schedule's cron and its next run (from the API's trigger.nextRunAt), searching the list
 * works with schedules in it, and the editor opens a schedule workflow without failing.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL, keepFailures, PASSWORD, startBrowserTest, stopBrowserTest } from '../helpers/browser.js';
import type { TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ server, browser, page } = await startBrowserTest());
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

    await page.getByRole('link', { name: 'Nightly catch-up' }).click();
    await page.getByRole('heading', { name: 'Nightly catch-up' }).waitFor();
  }, 60_000);
});
