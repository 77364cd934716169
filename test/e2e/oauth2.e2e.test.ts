/**
 * OAuth2 in the browser (SPEC 7e): an authorization-code credential created on the Credentials
 * page and connected with its Connect button — the provider (oauth2-mock-server) opens in a new
 * tab, signs the person in and sends the tab back to hookflow's callback page, which says it is
 * connected; the list then shows the state. Screenshot: credentials-oauth2.png.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  type BrowserTest,
  DESKTOP,
  keepFailures,
  PHONE,
  screenshot,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import { type MockOAuth2, startOAuth2Server } from '../helpers/oauth2.js';

let t: BrowserTest;
let provider: MockOAuth2;
let tab: Page | undefined;

beforeAll(async () => {
  provider = await startOAuth2Server();
  t = await startBrowserTest({ axe: true, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
}, 120_000);
afterAll(async () => {
  await stopBrowserTest(t ?? {});
  await provider?.close();
});
afterEach(keepFailures('oauth2', () => tab ?? t?.page));

describe('OAuth2 credentials in the browser', () => {
  it('creates an OAuth2 credential and connects it through the provider', async () => {
    const { page, server } = t;
    await signInAsOwner(page, server);
    await page.goto(`${server.url}/credentials`);
    await page.getByRole('heading', { name: 'Credentials', exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Calendar');
    await page.getByLabel('Type').selectOption('oauth2');
    // The redirect URL to register with the provider is shown.
    await page.getByText(`${server.url}/oauth2/callback`).waitFor();
    expect(await page.getByLabel('Grant type').inputValue()).toBe('authorization_code');
    await page.getByLabel('Authorization URL').fill(provider.authorizeUrl);
    await page.getByLabel('Token URL').fill(provider.tokenUrl);
    await page.getByLabel('Client ID').fill('calendar-app');
    await page.getByLabel('Client secret').fill('browser-SECRET-77aa');
    expect(await page.getByLabel('Client secret').getAttribute('type')).toBe('password');
    await page.getByLabel('Scope').fill('openid calendar');
    await page.getByRole('button', { name: 'Create credential' }).click();
    const row = page.getByRole('row', { name: /Calendar/ });
    await row.getByText('Not connected').waitFor();

    // Connect: the provider in a new tab, which comes back to the callback page.
    const opened = t.context.waitForEvent('page');
    await row.getByRole('button', { name: /Connect/ }).click();
    tab = await opened;
    await tab.getByRole('heading', { name: 'Connected — you can close this tab' }).waitFor();
    expect(new URL(tab.url()).pathname).toBe('/oauth2/callback');
    expect(provider.exchanges.filter((e) => e.grantType === 'authorization_code')).toHaveLength(1);
    await tab.close();
    tab = undefined;

    // Back on the list: connected, and the button offers to reconnect.
    await page.bringToFront();
    await page.evaluate("window.dispatchEvent(new Event('focus'))");
    await row.getByText('Connected').waitFor();
    await row.getByRole('button', { name: /Reconnect/ }).waitFor();
    const text = await page.evaluate<string>('document.body.innerText');
    expect(text).not.toContain('browser-SECRET-77aa');
    for (const token of provider.tokens()) expect(text).not.toContain(token);
    await screenshot(page, 'credentials-oauth2', DESKTOP);
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.waitForTimeout(100);
      expect(await axeViolations(page), `credentials at ${viewport.width}`).toEqual([]);
    }
    await page.setViewportSize(DESKTOP);
  });
});
