/**
 * Teams in the browser (SPEC 11b): an invited viewer opens the invite link, sets a password, is
 * signed in, and sees the workflows without anything that would change them (no New workflow, no
 * Save, Publish or activation switch, no Credentials or Members in the navigation). The owner's
 * Members page makes the link to copy; the Audit page filters by action and actor.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/process.js';
import { createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { call, PASSWORD } from '../helpers/team.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHROMIUM = process.env.HOOKFLOW_CHROMIUM ?? '/usr/bin/chromium';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`No chromium at ${CHROMIUM}: set HOOKFLOW_CHROMIUM.`);
  execFileSync(
    process.execPath,
    ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  server = await startTestServer({ env: { HOOKFLOW_PORT: String(port), HOOKFLOW_BASE_URL: url } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'en-GB' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return page;
}

describe('teams in the browser', () => {
  it('the owner invites a viewer, who joins by the link and sees no edit buttons', async () => {
    const setup = await call(server, 'POST', '/api/v1/auth/setup', {
      email: 'owner@example.com',
      password: PASSWORD,
      setupCode: server.setupCode,
    });
    expect(setup.status).toBe(201);
    const wf = await createWorkflow(server, { name: 'Orders' });

    // The owner: Members page, invite as viewer, the link shown to copy.
    const owner = await newPage();
    await owner.goto(server.url);
    await owner.getByLabel('Email').fill('owner@example.com');
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Sign in' }).click();
    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await owner.getByLabel('Email of the person to invite').fill('viewer@example.com');
    await owner.getByLabel('Role', { exact: true }).selectOption('viewer');
    await owner.getByRole('button', { name: 'Invite' }).click();
    const inviteUrl = (await owner.getByTestId('invite-url').textContent())!;
    expect(inviteUrl).toMatch(new RegExp(`^${server.url}/invite/`));
    await expect.poll(() => owner.getByRole('row', { name: /viewer@example\.com/ }).count()).toBe(1);

    // The viewer: the invite page, then signed in.
    const viewer = await newPage();
    await viewer.goto(inviteUrl);
    await viewer.getByRole('heading', { name: 'Join hookflow' }).waitFor();
    await viewer.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await viewer.getByLabel('Password again').fill(PASSWORD);
    await viewer.getByRole('button', { name: 'Join' }).click();
    await viewer.getByTestId('user-role').filter({ hasText: 'viewer' }).waitFor();
    expect(new URL(viewer.url()).pathname).toBe('/');

    await viewer.getByRole('link', { name: 'Orders' }).waitFor();
    const nav = viewer.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Workflows' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Credentials' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Members' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'New workflow' }).count()).toBe(0);
    expect(await viewer.getByRole('switch').count()).toBe(0);

    await viewer.getByRole('link', { name: 'Orders' }).click();
    await viewer.getByRole('heading', { name: 'Steps' }).waitFor();
    expect(new URL(viewer.url()).pathname).toBe(`/workflows/${wf.id}`);
    for (const name of [/^Save/, /^Saved/, /^Publish/, /Listen for test event/, /Add step/]) {
      expect(await viewer.getByRole('button', { name }).count(), String(name)).toBe(0);
    }
    expect(await viewer.getByRole('switch').count()).toBe(0);

    // The owner's Audit page: the invitation and the join, filtered by action and by actor.
    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await owner.getByLabel('Action').selectOption('member.join');
    await expect.poll(() => new URL(owner.url()).search).toBe('?action=member.join');
    const joins = owner.getByTestId('audit-row');
    await expect.poll(() => joins.count()).toBe(1);
    expect(await joins.first().textContent()).toContain('viewer@example.com');
    await owner.getByLabel('Action').selectOption('');
    await owner.getByLabel('Actor').fill('owner@example.com');
    await owner.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => new URL(owner.url()).searchParams.get('actor')).toBe('owner@example.com');
    await expect
      .poll(async () => (await owner.getByTestId('audit-row').allTextContents()).join('\n'))
      .toContain('member.invite');
    const actors = await owner.getByTestId('audit-row').locator('th').allTextContents();
    expect(actors.every((a) => a.startsWith('owner@example.com'))).toBe(true);
  }, 60_000);
});
