/**
 * The web UI end to end (SPEC 11): Debian's chromium, driven by playwright-core, against a real
 * hookflow serving the built UI. One user's first session: sign up, create a workflow, copy its test
 * URL, listen, send the seed's form POST, see it as a table and a schema, map `body.param1` into a
 * `set` step with the field picker, activate, call the production URL, and read the execution.
 * Then drafts and publishing (issue 17): editing an active workflow and listening saves a draft that
 * live traffic does not run, until Publish (after a side-by-side look at both versions).
 * Screenshots of the editor, the publish dialog and an execution, at desktop and phone width, go to
 * docs/screenshots.
 *
 * The server listens on a fixed free port with HOOKFLOW_BASE_URL set to it, so the URLs the UI shows
 * are the ones the test calls. The UI is built first (vite build → dist/web), so the run tests the
 * current source.
 */
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DESKTOP,
  EMAIL,
  keepFailures,
  PASSWORD,
  PHONE,
  screenshot as shoot,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import { freePort } from '../helpers/process.js';
import { json, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ server, browser, page } = await startBrowserTest({ clipboard: true }));
}, 120_000);

afterAll(() => stopBrowserTest({ browser, server }));

afterEach(keepFailures('e2e', () => page));

const screenshot = (name: string, viewport: { width: number; height: number }) => shoot(page, name, viewport);

/**
 * First start at `url` (the UI's address, with its slash): the owner account, created from the
 * address the server printed (`setupCode` fills in the field), then a new workflow named `name`,
 * open in the editor.
 */
async function signUpAndCreateWorkflow(
  tab: Page,
  url: string,
  setupCode: string,
  name: string,
): Promise<void> {
  await tab.goto(`${url}#setup-code=${setupCode}`);
  // waitFor, not isVisible(): the page renders once its script has loaded, which on a busy
  // machine is after goto returns (isVisible() does not wait: a flaky failure in CI).
  await tab.getByRole('heading', { name: 'Create the owner account' }).waitFor();
  await tab.getByLabel('Email').fill(EMAIL);
  await tab.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await tab.getByLabel('Password again').fill(PASSWORD);
  await tab.getByRole('button', { name: 'Create account' }).click();
  await tab.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();

  await tab.getByRole('button', { name: 'New workflow' }).click();
  await tab.getByLabel('Name of the new workflow').fill(name);
  await tab.getByRole('button', { name: 'Create', exact: true }).click();
  await tab.getByLabel('Workflow name').waitFor();
}

/** A step's card in the flow, by the step's name: choosing it shows the step's settings in the panel. */
const stepCard = (name: string) =>
  page
    .locator('.step-card-button')
    .filter({ has: page.locator('.flow-card-title', { hasText: new RegExp(`^${name}$`) }) });

describe('serving the UI', () => {
  it('answers pages with index.html, hashed assets as immutable, and never shadows the API', async () => {
    const home = await fetch(`${server.url}/`, { headers: { accept: 'text/html' } });
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    expect(home.headers.get('cache-control')).toBe('no-cache');
    expect(home.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await home.text();
    // Files are linked relative to the page's base, which is where the UI lives: the root here.
    expect(html).toContain('<base href="/">');
    const asset = /src="\.(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();

    const js = await fetch(`${server.url}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

    // A page the UI routes on the client.
    const deep = await fetch(`${server.url}/workflows/some-id`, { headers: { accept: 'text/html,*/*' } });
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(html);

    // Not pages: the usual JSON 404s.
    for (const [url, accept] of [
      ['/api/v1/nothing-here', 'text/html'],
      ['/webhook', 'text/html'],
      ['/workflows/some-id', 'application/json'],
      ['/assets/missing.js', '*/*'],
    ] as const) {
      const res = await fetch(`${server.url}${url}`, { headers: { accept } });
      expect(res.status, url).toBe(404);
      expect((await json(res)).code, url).toBe('route_not_found');
    }
    // Webhook and API routes keep their own answers.
    const hook = await fetch(`${server.url}/webhook/not-registered`, { headers: { accept: 'text/html' } });
    expect((await json(hook)).code).toBe('webhook_not_registered');
  });
});

describe('first session in the browser', () => {
  it('signs up, captures a test event, maps it into a step, activates and shows the execution', async () => {
    await signUpAndCreateWorkflow(page, `${server.url}/`, server.setupCode!, 'New orders');
    expect(await page.getByLabel('Workflow name').inputValue()).toBe('New orders');
    await page.getByTestId('publish-state').getByText('Not active · draft v1 (never published)').waitFor();
    // The Activate switch says what it does: publish the latest saved version.
    await page.getByText('Activating publishes the latest saved version (v1)').waitFor();

    // The test URL, copied to the clipboard.
    await page.getByRole('button', { name: 'Copy the test URL' }).click();
    await page.getByRole('button', { name: 'Copy the test URL' }).getByText('Copied').waitFor();
    const testUrl = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(testUrl).toMatch(new RegExp(`^${server.url}/webhook-test/[0-9a-f-]{36}$`));
    expect(await page.getByTestId('test-curl').textContent()).toBe(
      `curl -X POST '${testUrl}' -d 'param1=a&param2=b'`,
    );

    // Listen, and send the seed's request from outside the browser.
    await page.getByRole('button', { name: 'Listen for test event' }).click();
    await page.getByText('Waiting for a request on the test URL…').waitFor();
    const captured = await fetch(testUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'param1=a&param2=b',
    });
    expect(captured.status).toBe(200);

    // It arrives live: as a table …
    const table = page.getByRole('table', { name: 'Fields of the captured request' });
    await table.waitFor();
    const param1 = table
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'body.param1' }) });
    await expect(param1.getByRole('cell').first().textContent()).resolves.toBe('a');
    expect(await page.getByText('Waiting for a request on the test URL…').count()).toBe(0);
    // … as JSON …
    await page.getByRole('tab', { name: 'JSON' }).click();
    await expect(
      page.getByRole('figure', { name: 'Captured request (JSON)' }).locator('pre').textContent(),
    ).resolves.toContain('"param1": "a"');
    // … and as the learned schema.
    await page.getByRole('tab', { name: 'Schema' }).click();
    const tree = page.getByRole('list', { name: 'Learned data structure' });
    const param1Node = tree
      .locator('li.tree-leaf')
      .filter({ has: page.locator('.tree-name', { hasText: /^param1$/ }) });
    await param1Node.waitFor();
    expect(await param1Node.textContent()).toMatch(/param1\s*string.*"a"/);

    // A set step whose field comes from the picker.
    await page.getByRole('button', { name: '+ Set fields' }).click();
    await page.getByRole('button', { name: 'Insert field into Value' }).click();
    await page.getByRole('button', { name: /^body\.param1, string/ }).click();
    expect(await page.getByRole('textbox', { name: 'Value of param1' }).inputValue()).toBe(
      '{{ body.param1 }}',
    );
    expect(await page.getByLabel('Field name').inputValue()).toBe('param1');
    await page.getByText('Preview:').first().waitFor();
    expect(await page.locator('.expr-preview code').first().textContent()).toBe('"a"');
    // An invalid expression is shown inline, and fixing it clears the message.
    await page.getByRole('textbox', { name: 'Value of param1' }).fill('{{ body.param1 + }}');
    await page.locator('.field-error', { hasText: /position/ }).waitFor();
    await page.getByRole('textbox', { name: 'Value of param1' }).fill('{{ body.param1 }}');
    // The trigger's card shows the captured request again; the step's card its settings.
    await page.getByTestId('trigger-card').click();
    await page.getByRole('tab', { name: 'Table' }).click();
    await stepCard('set').click();
    await page.locator('.expr-preview code').first().waitFor();

    // Activate (the pending step is saved first, and published).
    await page.getByRole('switch', { name: 'Activated' }).click();
    await page.getByTestId('publish-state').getByText('Live · v2').waitFor();
    await page.getByText('Activated: live traffic runs v2').waitFor();
    expect(await page.getByRole('switch', { name: 'Activated' }).getAttribute('aria-checked')).toBe('true');
    expect(await page.getByRole('button', { name: 'Saved' }).isDisabled()).toBe(true);

    // Live traffic.
    const productionUrl = testUrl.replace('/webhook-test/', '/webhook/');
    const live = await fetch(productionUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'param1=a&param2=b',
    });
    expect(live.status).toBe(200);
    const { executionId } = (await live.json()) as { executionId: string };

    // Its execution, from the list.
    await page.getByRole('link', { name: 'Executions', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Executions', exact: true }).waitFor();
    await page.getByLabel('Mode').selectOption('production');
    await page.getByRole('link', { name: new RegExp(`^Execution ${executionId}`) }).click();
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();
    const output = page.getByRole('figure', { name: 'Output of set' }).locator('pre');
    await expect(output.textContent()).resolves.toBe(JSON.stringify({ param1: 'a' }, null, 2));
    await screenshot('execution-desktop', DESKTOP);
    await screenshot('execution-phone', PHONE);

    // Replay it into the published version: a new execution opens.
    await page.getByRole('button', { name: 'Replay into published version' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(executionId));
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();

    // Sign out, and back in.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
    await page.getByRole('link', { name: 'New orders' }).waitFor();
  }, 120_000);

  it('creates an API token that is shown once and works from a script until it is revoked', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('heading', { name: 'API tokens', exact: true }).waitFor();
    await page.getByLabel('Name of the new token').fill('deploy script');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByTestId('new-token');
    await shown.waitFor();
    const token = (await shown.textContent())?.trim() ?? '';
    const call = () =>
      fetch(`${server.url}/api/v1/workflows?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    expect((await call()).status).toBe(200);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'deploy script' }) });
    await expect(row.getByRole('cell').first().textContent()).resolves.toBe(`${token.slice(0, 8)}…`);

    // Shown once: after a reload only its first characters are left.
    await page.reload();
    await page.getByRole('rowheader', { name: 'deploy script' }).waitFor();
    expect(await page.getByTestId('new-token').count()).toBe(0);

    await page.getByRole('button', { name: 'Revoke deploy script' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText('Revoked "deploy script"').waitFor();
    expect(await page.getByRole('rowheader', { name: 'deploy script' }).count()).toBe(0);
    expect((await call()).status).toBe(401);
  }, 60_000);

  it('explains a path conflict inline when activating from the list', async () => {
    // Two workflows on one method and path; the first is active.
    const trigger = { path: 'conflict/demo', methods: ['POST'] };
    expect(
      (await server.api('POST', '/api/v1/workflows', { name: 'Owner of the path', trigger })).status,
    ).toBe(201);
    const owner = (await server.api('GET', '/api/v1/workflows?limit=200')).body.items.find(
      (w: { name: string }) => w.name === 'Owner of the path',
    );
    expect((await server.api('POST', `/api/v1/workflows/${owner.id}/activate`)).status).toBe(200);
    expect((await server.api('POST', '/api/v1/workflows', { name: 'Same path', trigger })).status).toBe(201);
    await page.goto(`${server.url}/`);
    await page.getByRole('switch', { name: 'Active: Same path' }).click();
    const alert = page.getByRole('alert').filter({ hasText: /path/i });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/What to do/);
    expect(await page.getByRole('switch', { name: 'Active: Same path' }).getAttribute('aria-checked')).toBe(
      'false',
    );
  }, 60_000);
});

/** Whether the page scrolls sideways (the phone-width check). */
const scrollsSideways = (tab: Page) =>
  tab.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');

describe('drafts and publishing in the editor (issue 17)', () => {
  it('Listen saves a draft that live traffic does not run; Publish shows both versions, then puts it live', async () => {
    // An active workflow whose answer is the value its set step sets.
    const created = await server.api('POST', '/api/v1/workflows', {
      name: 'Order status',
      trigger: { path: 'e2e/drafts', methods: ['POST'], response: { mode: 'lastStep' } },
      steps: [{ name: 'value', type: 'set', fields: { value: 'one' } }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await server.api('POST', `/api/v1/workflows/${id}/activate`)).body.publishedVersion).toBe(1);
    const production = async () => {
      const res = await fetch(`${server.url}/webhook/e2e/drafts`, { method: 'POST', body: 'a=1' });
      expect(res.status).toBe(200);
      return res.json();
    };
    expect(await production()).toEqual({ value: 'one' });

    await page.goto(`${server.url}/workflows/${id}`);
    const state = page.getByTestId('publish-state');
    await state.getByText('Live · v1').waitFor();
    expect(await page.getByRole('button', { name: 'Publish', exact: true }).count()).toBe(0);

    // Edit the set value, then Listen: it saves the draft and says so where the user clicked.
    await stepCard('value').click();
    await page.getByRole('textbox', { name: 'Value of value' }).fill('two');
    await page.getByTestId('trigger-card').click();
    await page.getByRole('button', { name: 'Listen for test event' }).click();
    await page.getByText('Waiting for a request on the test URL…').waitFor();
    const saved = page.locator('.test-panel').getByRole('status').filter({ hasText: 'Saved as draft v2' });
    await saved.waitFor();
    expect(await saved.textContent()).toContain('Saved as draft v2 — live traffic still runs v1');
    expect(await saved.isVisible()).toBe(true);
    const box = await saved.boundingBox();
    expect(box && box.width > 100 && box.height > 10).toBe(true);
    await state.getByText('Published v1 · draft v2').waitFor();
    const publish = page.getByRole('button', { name: 'Publish', exact: true });
    expect(await publish.isVisible()).toBe(true);

    // Production still runs v1; the test URL runs the draft.
    expect(await production()).toEqual({ value: 'one' });
    const test = await fetch(`${server.url}/webhook-test/e2e/drafts`, { method: 'POST', body: 'a=1' });
    expect(await test.json()).toEqual({ value: 'two' });
    await page.getByRole('table', { name: 'Fields of the captured request' }).waitFor();

    // Replay from the editor runs the draft, and says so: the last test run is the replay's.
    await page.getByRole('button', { name: 'Replay into draft' }).click();
    await page
      .getByTestId('last-run')
      .filter({ hasText: /v2, Replay into draft\): Succeeded/ })
      .waitFor();

    await page.setViewportSize(PHONE);
    await page.waitForTimeout(150);
    expect(await scrollsSideways(page)).toBe(false);
    expect(await publish.isVisible()).toBe(true);

    // Publish: first what changes, the changed field's old and new values highlighted.
    await publish.click();
    const dialog = page.getByRole('dialog', { name: 'Publish draft v2?' });
    await dialog.waitFor();
    const change = dialog.getByTestId('diff-step-value');
    await change.waitFor();
    expect(await change.locator('dt').textContent()).toBe('fields.value');
    const old = change.locator('del.diff-old');
    const now = change.locator('ins.diff-new');
    expect(await old.textContent()).toContain('"one"');
    expect(await now.textContent()).toContain('"two"');
    const highlight = (el: typeof old) =>
      el.evaluate(
        (e) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
          ).getComputedStyle(e).backgroundColor,
      );
    expect(await highlight(old)).not.toBe('rgba(0, 0, 0, 0)');
    expect(await highlight(now)).not.toBe('rgba(0, 0, 0, 0)');
    expect(await highlight(old)).not.toBe(await highlight(now));
    expect(await dialog.getByTestId('version-changes').textContent()).toBe(
      'Published v1 → Draft v2: 1 step changed.',
    );
    await screenshot('publish-desktop', DESKTOP);
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(150);
    expect(await scrollsSideways(page)).toBe(false);
    // The dialog's buttons stay in sight at phone width, however long the two versions are.
    const confirm = await dialog.getByRole('button', { name: 'Publish', exact: true }).boundingBox();
    expect(confirm && confirm.y >= 0 && confirm.y + confirm.height <= PHONE.height).toBe(true);
    await screenshot('publish-phone', PHONE);

    // The raw JSON of both, side by side, one click away.
    await dialog.getByRole('button', { name: 'Show the raw JSON' }).click();
    const published = dialog.getByRole('figure', { name: 'Published v1' }).locator('pre');
    const draft = dialog.getByRole('figure', { name: 'Draft v2' }).locator('pre');
    await published.waitFor();
    expect(await published.textContent()).toContain('"value": "one"');
    expect(await published.textContent()).not.toContain('"value": "two"');
    expect(await draft.textContent()).toContain('"value": "two"');
    // Cancel publishes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await production()).toEqual({ value: 'one' });

    await publish.click();
    await change.waitFor();
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByText('Published v2: live traffic runs it now.').waitFor();
    await state.getByText('Live · v2').waitFor();
    expect(await publish.count()).toBe(0);
    expect(await production()).toEqual({ value: 'two' });
    expect((await server.api('GET', `/api/v1/workflows/${id}`)).body).toMatchObject({
      version: 2,
      publishedVersion: 2,
    });
  }, 90_000);
});

describe('leaving the editor and fixing errors (issue 17)', () => {
  /** A workflow with one `set` step, open in the editor. */
  async function openWorkflow(
    name: string,
    path: string,
    steps = [{ name: 'value', type: 'set', fields: { value: 'one' } }],
  ) {
    const created = await server.api('POST', '/api/v1/workflows', {
      name,
      trigger: { path, methods: ['POST'] },
      steps,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await page.goto(`${server.url}/workflows/${id}`);
    await page.getByLabel('Workflow name').waitFor();
    return id;
  }
  const stored = async (id: string) => (await server.api('GET', `/api/v1/workflows/${id}`)).body;

  it('asks before an in-app link leaves unsaved edits: Stay keeps them, Discard leaves, Save saves then leaves', async () => {
    const id = await openWorkflow('Leave guard', 'e2e/leave');
    const editorPath = new URL(page.url()).pathname;
    const value = page.getByRole('textbox', { name: 'Value of value' });
    const back = page.getByRole('link', { name: '← Workflows' });
    const dialog = page.getByRole('dialog', { name: 'Leave with unsaved changes?' });

    // Nothing edited: the link just leaves, and Back returns (both within the page).
    await back.click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
    await page.goBack();
    await stepCard('value').click();
    await value.fill('two');

    // Stay: the dialog closes, the page and the edit stay.
    await back.click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Stay' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(new URL(page.url()).pathname).toBe(editorPath);
    expect(await value.inputValue()).toBe('two');

    // So is the browser's history (Forward to the list here): held, and Stay keeps the page and the edit.
    await page.goForward();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Stay' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(new URL(page.url()).pathname).toBe(editorPath);
    expect(await value.inputValue()).toBe('two');

    // The top navigation is guarded too; Discard leaves and saves nothing.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Discard changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(new URL(page.url()).pathname).toBe('/executions');
    expect(await stored(id)).toMatchObject({ version: 1, steps: [{ fields: { value: 'one' } }] });

    // Save: saves the edit, then goes where the link pointed.
    await page.goto(`${server.url}${editorPath}`);
    await stepCard('value').click();
    await value.fill('three');
    await back.click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Save and leave' }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await stored(id)).toMatchObject({ version: 2, steps: [{ fields: { value: 'three' } }] });
  }, 60_000);

  it('clears a field\'s error as soon as the field is fixed, so "Not saved" and "Saved" never show together', async () => {
    const id = await openWorkflow('Fixing errors', 'e2e/fix', [
      { name: 'value', type: 'set', fields: { value: 'one' } },
      { name: 'other', type: 'set', fields: { value: 'two' } },
    ]);
    const notSaved = page.getByRole('alert').filter({ hasText: 'Not saved' });
    const pathField = page.getByLabel('Path', { exact: true });

    // An invalid path: Save refuses and says why.
    await pathField.fill('e2e//fix');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await notSaved.waitFor();
    expect(await page.locator('.field-error').filter({ hasText: 'empty segment' }).count()).toBeGreaterThan(
      0,
    );

    // Fixed: the error goes at once, from the field and the summary, and Save is enabled.
    await pathField.fill('e2e/fixed');
    await notSaved.waitFor({ state: 'hidden' });
    expect(await page.getByText('empty segment').count()).toBe(0);
    const saveButton = page.getByRole('button', { name: 'Save', exact: true });
    expect(await saveButton.isEnabled()).toBe(true);
    await saveButton.click();
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    expect(await stored(id)).toMatchObject({ version: 2, trigger: { path: 'e2e/fixed' } });

    // A duplicate step name, then the name put back: no "Not saved" beside a disabled "Saved".
    await stepCard('other').click();
    const secondName = page.getByLabel('Step name');
    await secondName.fill('value');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await notSaved.waitFor();
    expect(await page.getByText('is used by another step').count()).toBeGreaterThan(0);
    await secondName.fill('other');
    await notSaved.waitFor({ state: 'hidden' });
    expect(await page.getByText('is used by another step').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Saved', exact: true }).isDisabled()).toBe(true);
  }, 60_000);
});

describe('behind a proxy that serves hookflow under a path', () => {
  it('signs up, navigates, listens for a test event and reloads a page, all under /hookflow/', async () => {
    // nginx's `location /hookflow/ { proxy_pass http://hookflow:5678/; }`: the path is stripped.
    const proxyPort = await freePort();
    const proxied = `http://127.0.0.1:${proxyPort}/hookflow`;
    const behind = await startTestServer({ env: { HOOKFLOW_BASE_URL: proxied } });
    const proxy = await strippingProxy(proxyPort, '/hookflow', behind.url);
    // A context of its own: cookies are per host, not per port, and this sign-up is another server's.
    const own = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', timezoneId: 'UTC' });
    const tab = await own.newPage();
    tab.setDefaultTimeout(10_000);
    try {
      await signUpAndCreateWorkflow(tab, `${proxied}/`, behind.setupCode!, 'Behind a proxy');
      expect(new URL(tab.url()).pathname).toMatch(/^\/hookflow\/workflows\/[0-9a-f-]{36}$/);
      const curl = (await tab.getByTestId('test-curl').textContent()) ?? '';
      const testUrl = /'(http[^']+)'/.exec(curl)?.[1] ?? '';
      expect(testUrl).toMatch(new RegExp(`^${proxied}/webhook-test/[0-9a-f-]{36}$`));

      // The live stream of captures (SSE) goes through the proxy too.
      await tab.getByRole('button', { name: 'Listen for test event' }).click();
      await tab.getByText('Waiting for a request on the test URL…').waitFor();
      const captured = await fetch(testUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'param1=a&param2=b',
      });
      expect(captured.status).toBe(200);
      await tab.getByRole('table', { name: 'Fields of the captured request' }).waitFor();

      // Links carry the path; a reload of a page the UI routes itself finds its files.
      await tab.getByRole('link', { name: 'API tokens' }).click();
      await tab.getByRole('heading', { name: 'API tokens' }).waitFor();
      expect(new URL(tab.url()).pathname).toBe('/hookflow/tokens');
      await tab.reload();
      await tab.getByRole('heading', { name: 'API tokens' }).waitFor();
      const docs = await tab.getByRole('link', { name: 'API docs' }).getAttribute('href');
      expect(docs).toBe('/hookflow/api/docs');
      const docsPage = await fetch(`http://127.0.0.1:${proxyPort}${docs}`);
      expect(docsPage.status).toBe(200);
      expect(await docsPage.text()).toContain('href="/hookflow/api/docs/static/swagger-ui.css"');
    } finally {
      await own.close();
      await proxy.close();
      await behind.close();
    }
  }, 90_000);
});

/**
 * A reverse proxy (the third party here) on `port` that forwards `prefix/…` to `target` without
 * the prefix, streaming both ways, and answers 404 to anything else.
 */
async function strippingProxy(port: number, prefix: string, target: string) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const rest = url.slice(prefix.length);
    if (!url.startsWith(prefix) || (rest !== '' && !rest.startsWith('/') && !rest.startsWith('?'))) {
      res.writeHead(404).end('not proxied');
      return;
    }
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: rest.startsWith('/') ? rest : `/${rest}`,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
