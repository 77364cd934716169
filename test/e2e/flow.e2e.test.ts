/**
 * Flow control in the browser (issue 18, SPEC 7b/11): a `switch` workflow built in the editor —
 * one URL routed by `{{ headers."x-github-event" }}` into a case per event type — saved, listened
 * to, called with two event types, and both branches seen in the editor's preview and on the
 * execution pages; at desktop and phone width (390 px). Screenshots go to docs/screenshots
 * (switch-editor.png, switch-execution.png).
 *
 * Chromium (playwright-core) against a real hookflow serving the built UI (vite build first).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');
const CHROMIUM = process.env.HOOKFLOW_CHROMIUM ?? '/usr/bin/chromium';
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`No chromium at ${CHROMIUM}: install it or set HOOKFLOW_CHROMIUM.`);
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
  const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', timezoneId: 'UTC' });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(async ({ task }) => {
  if (task.result?.state !== 'fail' || !page) return;
  const dir = path.join(ROOT, 'test-results');
  fs.mkdirSync(dir, { recursive: true });
  const name = task.name.replace(/\W+/g, '-').slice(0, 60);
  await page.screenshot({ path: path.join(dir, `e2e-${name}.png`), fullPage: true }).catch(() => undefined);
  fs.writeFileSync(
    path.join(dir, `e2e-${name}.txt`),
    `${page.url()}\n\n${await page.evaluate<string>('document.body.innerText').catch(() => '')}`,
  );
});

async function screenshot(name: string, viewport: { width: number; height: number }) {
  await page.setViewportSize(viewport);
  await page.evaluate('window.scrollTo(0, 0)');
  await page.waitForTimeout(150);
  await page.screenshot({
    path: path.join(SCREENSHOTS, `${name}.png`),
    fullPage: true,
    animations: 'disabled',
  });
  await page.setViewportSize(DESKTOP);
}

/** Nothing wider than the phone's screen: the page does not scroll sideways. */
async function fitsPhone(): Promise<void> {
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  await page.setViewportSize(DESKTOP);
  expect(width).toBeLessThanOrEqual(PHONE.width);
}

/** A section of the editor (a branch) by the start of its heading. */
const branch = (name: RegExp) => page.getByRole('region', { name });

async function sendEvent(testUrl: string, event: string, body: unknown): Promise<void> {
  await page.getByRole('button', { name: 'Listen for test event' }).click();
  await page.getByText('Waiting for a request on the test URL…').waitFor();
  const res = await fetch(testUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': event },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await page.getByText('Waiting for a request on the test URL…').waitFor({ state: 'detached' });
}

describe('a switch workflow in the browser', () => {
  it('is built in the editor, routes two event types to their cases, and shows the path taken', async () => {
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Create the owner account' }).waitFor();
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByLabel('Password again').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('GitHub events');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Workflow name').waitFor();

    // The switch, routed by the event header.
    await page.getByRole('button', { name: '+ Switch' }).click();
    await page.getByRole('textbox', { name: 'Value to route on' }).fill('{{ headers."x-github-event" }}');
    // Case 1 (a new switch starts with one): equals "push", with a set step inside.
    const case1 = branch(/^Case 1/);
    await case1.getByLabel('Equals').fill('push');
    await case1.getByLabel('Add a step to case 1 of switch').selectOption('set');
    await case1.getByRole('button', { name: 'Add the step to case 1 of switch' }).click();
    // The new step has the focus, for keyboard users.
    await expect
      .poll(() => page.evaluate<string>('document.activeElement?.textContent ?? ""'))
      .toContain('Set fields');
    await case1.getByRole('textbox', { name: 'Field name' }).fill('kind');
    await case1.getByRole('textbox', { name: 'Value of kind' }).fill('commits: {{ $count(body.commits) }}');
    // Case 2: equals "issues", its set step reads the body.
    await page.getByRole('button', { name: '+ Add a case' }).click();
    const case2 = branch(/^Case 2/);
    await case2.getByLabel('Equals').fill('issues');
    await case2.getByLabel('Add a step to case 2 of switch').selectOption('set');
    await case2.getByRole('button', { name: 'Add the step to case 2 of switch' }).click();
    await case2.getByRole('textbox', { name: 'Field name' }).fill('kind');
    await case2.getByRole('textbox', { name: 'Value of kind' }).fill('issue {{ body.issue.number }}');
    // A third step in a branch, then removed: the focus stays in the branch.
    await case2.getByLabel('Add a step to case 2 of switch').selectOption('fail');
    await case2.getByRole('button', { name: 'Add the step to case 2 of switch' }).click();
    await case2.getByRole('button', { name: 'Remove fail' }).click();
    await expect
      .poll(() => page.evaluate<string>('document.activeElement?.textContent ?? ""'))
      .toContain('Set fields');
    // The default: a fail step with a message.
    const fallback = branch(/^Default/);
    await fallback.getByLabel('Add a step to the default of switch').selectOption('fail');
    await fallback.getByRole('button', { name: 'Add the step to the default of switch' }).click();
    await fallback
      .getByRole('textbox', { name: 'Message' })
      .fill('Unrouted event {{ $trigger.headers."x-github-event" }}');

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const saved = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; steps: unknown[]; trigger: { testUrl: string } }[];
    };
    const workflow = saved.items[0]!;
    // What the editor saved is SPEC 7b's switch, as written.
    expect(workflow.steps).toEqual([
      {
        name: 'switch',
        type: 'switch',
        value: '{{ headers."x-github-event" }}',
        cases: [
          {
            equals: 'push',
            steps: [{ name: 'set', type: 'set', fields: { kind: 'commits: {{ $count(body.commits) }}' } }],
          },
          {
            equals: 'issues',
            steps: [{ name: 'set2', type: 'set', fields: { kind: 'issue {{ body.issue.number }}' } }],
          },
        ],
        default: [
          { name: 'fail', type: 'fail', message: 'Unrouted event {{ $trigger.headers."x-github-event" }}' },
        ],
      },
    ]);

    // Two event types on the test URL.
    const testUrl = workflow.trigger.testUrl;
    await sendEvent(testUrl, 'push', { commits: [{ id: 'a' }, { id: 'b' }] });
    await sendEvent(testUrl, 'issues', { issue: { number: 7 } });

    // The editor previews the event on screen (the latest, issues): case 2 is taken.
    await case2.getByText('taken by the event on screen').waitFor();
    expect(await case1.getByText('taken by the event on screen').count()).toBe(0);
    await screenshot('switch-editor', DESKTOP);
    await fitsPhone();

    // Both executions, each with its branch.
    await page.getByRole('link', { name: 'Executions', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Executions', exact: true }).waitFor();
    const rows = page.getByRole('link', { name: /^Execution / });
    await expect.poll(() => rows.count()).toBe(2);
    const executions = (await server.api('GET', `/api/v1/executions?workflowId=${workflow.id}`)).body as {
      items: { id: string; trigger: { headers: Record<string, string> } }[];
    };
    const byEvent = Object.fromEntries(
      executions.items.map((e) => [e.trigger.headers['x-github-event'], e.id]),
    );

    await page.getByRole('link', { name: new RegExp(`^Execution ${byEvent.push}`) }).click();
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();
    const taken = page.getByTestId('branch-taken');
    // The branches are named from the version's steps, which load after the execution.
    await taken.filter({ hasText: 'Branch taken: Case 1 (equals "push")' }).waitFor();
    await taken.getByText(/Not run: Case 2 \(equals "issues"\) · Default/).waitFor();
    const inner = page.getByRole('list', { name: 'Steps run inside switch' });
    await expect(
      inner.getByRole('figure', { name: 'Output of set' }).locator('pre').textContent(),
    ).resolves.toBe(JSON.stringify({ kind: 'commits: 2' }, null, 2));
    await screenshot('switch-execution', DESKTOP);
    await fitsPhone();

    await page.goto(`${server.url}/executions/${byEvent.issues}`);
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();
    await page
      .getByTestId('branch-taken')
      .filter({ hasText: 'Branch taken: Case 2 (equals "issues")' })
      .waitFor();
    await expect(
      page.getByRole('figure', { name: 'Output of set2' }).locator('pre').textContent(),
    ).resolves.toBe(JSON.stringify({ kind: 'issue 7' }, null, 2));
  }, 120_000);
});
