/**
 * Teams in the browser (SPEC 11b): the owner's Members page makes an invite link; the invited
 * viewer opens it, sets a password, is signed in, and sees the workflows without anything that
 * would change them (no New workflow, no Save, Publish or activation switch, no Credentials,
 * Variables, Data or Members in the navigation); the owner's Audit page filters by action and
 * actor. The new pages pass axe-core and do not scroll sideways at phone width.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  DESKTOP,
  keepFailures,
  PHONE,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
  type BrowserTest,
} from '../helpers/browser.js';
import { createWorkflow } from '../helpers/server.js';
import { PASSWORD } from '../helpers/team.js';

let t: BrowserTest;
let viewer: Page | undefined;

beforeAll(async () => {
  t = await startBrowserTest({ axe: true, clipboard: true });
}, 120_000);
afterAll(() => stopBrowserTest(t ?? {}));
afterEach(keepFailures('teams', () => viewer ?? t?.page));

/** No serious or critical axe violation and no sideways scrolling, at desktop and phone width. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(100);
    expect(await axeViolations(page), `${name} at ${viewport.width}`).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), name).toBeLessThanOrEqual(
      viewport.width,
    );
  }
  await page.setViewportSize(DESKTOP);
}

describe('teams in the browser', () => {
  it('the owner invites a viewer, who joins by the link and sees no edit buttons; the Audit page filters', async () => {
    const { page: owner, server, browser } = t;
    await signInAsOwner(owner, server);
    const wf = await createWorkflow(server, { name: 'Orders' });

    // The owner: Members page, invite as viewer, the link shown to copy.
    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await owner.getByLabel('Email of the person to invite').fill('viewer@example.com');
    await owner.getByLabel('Role', { exact: true }).selectOption('viewer');
    await owner.getByRole('button', { name: 'Invite' }).click();
    const inviteUrl = (await owner.getByTestId('invite-url').textContent())!;
    expect(inviteUrl).toMatch(new RegExp(`^${server.url}/invite/`));
    await expect.poll(() => owner.getByRole('row', { name: /viewer@example\.com/ }).count()).toBe(1);
    await checkPage(owner, 'Members');

    // The viewer, in a browser of their own: the invite page, then signed in.
    const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', bypassCSP: true });
    viewer = await context.newPage();
    viewer.setDefaultTimeout(10_000);
    await viewer.goto(inviteUrl);
    await viewer.getByRole('heading', { name: 'Join hookflow' }).waitFor();
    await checkPage(viewer, 'Invite');
    await viewer.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await viewer.getByLabel('Password again').fill(PASSWORD);
    await viewer.getByRole('button', { name: 'Join' }).click();
    await viewer.getByTestId('user-role').filter({ hasText: 'viewer' }).waitFor();
    expect(new URL(viewer.url()).pathname).toBe('/');

    await viewer.getByRole('link', { name: 'Orders' }).waitFor();
    const nav = viewer.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Workflows' }).count()).toBe(1);
    for (const name of ['Credentials', 'Variables', 'Data', 'Members', 'Audit']) {
      expect(await nav.getByRole('link', { name }).count(), name).toBe(0);
    }
    expect(await viewer.getByRole('button', { name: 'New workflow' }).count()).toBe(0);
    expect(await viewer.getByRole('switch').count()).toBe(0);

    await viewer.getByRole('link', { name: 'Orders' }).click();
    await viewer.getByRole('heading', { name: 'Steps' }).waitFor();
    expect(new URL(viewer.url()).pathname).toBe(`/workflows/${wf.id}`);
    for (const name of [/^Save/, /^Saved/, /^Publish/, /Listen for test event/, /Add step/, /^\+ /]) {
      expect(await viewer.getByRole('button', { name }).count(), String(name)).toBe(0);
    }
    expect(await viewer.getByRole('switch').count()).toBe(0);
    await context.close();
    viewer = undefined;

    // The owner's Audit page: the invitation and the joins, filtered by action, then by actor.
    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await owner.getByLabel('Action').selectOption('member.join');
    await expect.poll(() => new URL(owner.url()).search).toBe('?action=member.join');
    const joins = owner.getByTestId('audit-row');
    // Two joins, newest first: the viewer's, then the owner's (creating the owner account is a join).
    await expect.poll(() => joins.count()).toBe(2);
    expect(await joins.first().textContent()).toContain('viewer@example.com');
    expect(await joins.last().textContent()).toContain('owner@example.com');
    await owner.getByLabel('Action').selectOption('');
    await owner.getByLabel('Actor').fill('owner@example.com');
    await owner.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => new URL(owner.url()).searchParams.get('actor')).toBe('owner@example.com');
    await expect
      .poll(async () => (await owner.getByTestId('audit-row').allTextContents()).join('\n'))
      .toContain('member.invite');
    const actors = await owner.getByTestId('audit-row').locator('th').allTextContents();
    expect(actors.every((a) => a.startsWith('owner@example.com'))).toBe(true);
    await checkPage(owner, 'Audit');
  }, 90_000);
});
