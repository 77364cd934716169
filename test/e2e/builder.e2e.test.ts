/**
 * The editor as a workflow builder, in Chromium at 1366 px and at 390 px, under the page's own
 * Content Security Policy (no bypass): a GitHub router built from an empty workflow — a switch on
 * the `x-github-event` header, a `set` filled with the field picker, an http call with a
 * credential (to a local receiver), a forEach over the commits with a code step reading `$item` —
 * with the steps in view from the start. Each test run (a capture, Replay into draft, Run now)
 * updates the cards; a failure goes stale once the step is edited and is cleared by the next run.
 * The code editor highlights under the CSP, and the console stays free of CSP errors. The clicks
 * it took are printed. Screenshots: editor-desktop.png and editor-phone.png (the README's).
 */
import http from 'node:http';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DESKTOP,
  keepFailures,
  PHONE,
  screenshot,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import type { TestServer } from '../helpers/server.js';

const SECRET = 'gh-router-token-8c1d';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let receiver: http.Server;
let receiverUrl = '';
const received: { authorization?: string; contentType?: string; body: string }[] = [];
/** Console errors and CSP reports of the page: none is expected. */
const problems: string[] = [];

beforeAll(async () => {
  let first: Page;
  ({
    server,
    browser,
    page: first,
  } = await startBrowserTest({
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
  }));
  await signInAsOwner(first, server);
  // A page with the CSP as users have it (startBrowserTest's context does not bypass it either;
  // a context of our own keeps this file's console listener to itself).
  context = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', timezoneId: 'UTC' });
  await context.addCookies(await first.context().cookies());
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
      problems.push(`${m.text()} (at ${m.location().url}:${m.location().lineNumber}, on ${page.url()})`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
  // What a CSP report does not say in the console: the start of the blocked style, and where.
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error('CSP blocked ' + e.violatedDirective + ': ' + JSON.stringify(e.sample) + ' from ' + e.sourceFile + ':' + e.lineNumber))`);
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
  await server.api('POST', '/api/v1/credentials', {
    name: 'Chat token',
    type: 'bearer',
    data: { token: SECRET },
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await stopBrowserTest({ browser, server });
});

afterEach(keepFailures('builder', () => page));

/** Clicks counted: what a person does with the mouse (choosing from a list counts as one). */
let clicks = 0;
async function click(target: Locator): Promise<void> {
  clicks++;
  await target.click();
}
async function choose(target: Locator, value: string | { label: string } | { index: number }): Promise<void> {
  clicks++;
  await target.selectOption(value);
}

/** A step's card in the flow, by the step's name. */
const card = (name: string) =>
  page.locator('[data-testid="step-card"]').filter({
    has: page.locator(':scope > .step-card-button .flow-card-title', { hasText: new RegExp(`^${name}$`) }),
  });
const cardButton = (name: string) => card(name).locator(':scope > .step-card-button');
/** The selected card's details: the side panel, or the sheet on a phone. */
const details = () => page.locator('.side-panel, dialog.sheet[open]').first();

async function inViewport(target: Locator): Promise<boolean> {
  const box = await target.boundingBox();
  const size = page.viewportSize()!;
  return box !== null && box.y >= 0 && box.y + Math.min(box.height, 40) <= size.height;
}

/** Back to the flow from a phone's sheet (nothing to do beside a side panel). */
async function backToSteps(): Promise<void> {
  const back = page.locator('dialog.sheet[open]').getByRole('button', { name: 'Back to the steps' });
  if (await back.isVisible()) await click(back);
}

/** Adds a step of `type` to a lane of the flow; its settings open (beside the flow, or as a sheet). */
async function addToLane(place: string, type: string): Promise<void> {
  await backToSteps();
  const lane = page.getByRole('region', { name: place });
  await choose(lane.getByLabel(`Add a step to ${place}`), type);
  await click(lane.getByRole('button', { name: `Add the step to ${place}` }));
  await details().getByRole('textbox', { name: 'Step name' }).waitFor();
}

/** Picks a field with the field picker into the field labelled `target`. */
async function pick(target: string, field: RegExp): Promise<void> {
  await click(details().getByRole('button', { name: `Insert field into ${target}` }));
  await click(page.getByRole('button', { name: field }));
}

async function listenAndSend(testUrl: string, event: string, body: unknown): Promise<void> {
  await backToSteps();
  await click(page.getByTestId('trigger-card'));
  await click(details().getByRole('button', { name: 'Listen for test event' }));
  await details().getByText('Waiting for a request on the test URL…').waitFor();
  const res = await fetch(testUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': event },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await details().getByText('Waiting for a request on the test URL…').waitFor({ state: 'detached' });
}

/** Replaces the code in the selected step's code editor: everything selected, then typed over. */
async function typeCode(source: string): Promise<void> {
  await click(details().getByTestId('code-editor').locator('.cm-content'));
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(source);
}

/** The status a card shows for the last test run (`data-run-status`), polled. */
const runStatus = (name: string) => card(name).getAttribute('data-run-status');

const PUSH = {
  ref: 'refs/heads/main',
  repository: { full_name: 'acme/shop' },
  commits: [
    { id: 'c1', message: 'Fix the cart' },
    { id: 'c2', message: 'Add a test' },
  ],
};

describe('building the GitHub router in the editor', () => {
  for (const [width, viewport] of [
    ['1366', DESKTOP],
    ['390', PHONE],
  ] as const) {
    it(`at ${width} px: built from an empty workflow with the steps in view, each test run on the cards`, async () => {
      clicks = 0;
      received.length = 0;
      const name = `GitHub router ${width}`;
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/`);
      await click(page.getByRole('button', { name: 'New workflow' }));
      await page.getByLabel('Name of the new workflow').fill(name);
      await click(page.getByRole('button', { name: 'Create', exact: true }));
      await page.getByLabel('Workflow name').waitFor();
      // The steps come first: adding one needs no scrolling past the trigger.
      expect(await page.evaluate<number>('window.scrollY')).toBe(0);
      const addStep = page.getByRole('group', { name: 'Add a step' });
      expect(await inViewport(addStep.getByRole('button').first()), 'add a step in view').toBe(true);
      const workflow = (
        (await server.api('GET', '/api/v1/workflows')).body as {
          items: { id: string; name: string; trigger: { testUrl: string } }[];
        }
      ).items.find((w) => w.name === name)!;

      // A first push, so the picker knows the request's fields.
      await listenAndSend(workflow.trigger.testUrl, 'push', PUSH);

      // The switch on the event header, picked from the captured headers.
      await backToSteps();
      await click(page.getByRole('button', { name: '+ Switch' }));
      expect(await inViewport(cardButton('switch')), 'the first step card in view').toBe(true);
      await pick('Value to route on', /^headers\.x-github-event, string/);
      await expect(details().getByRole('textbox', { name: 'Value to route on' }).inputValue()).resolves.toBe(
        '{{ headers.`x-github-event` }}',
      );
      await details()
        .getByRole('region', { name: /^Case 1/ })
        .getByLabel('Equals')
        .fill('push');

      // Case 1: a set with the repository's name from the picker.
      await addToLane('case 1 of switch', 'set');
      await pick('Value', /^body\.repository\.full_name, string/);
      await details().getByRole('textbox', { name: 'Field name' }).fill('repo');
      // Then the http call with the credential; its JSON body takes an expression unquoted.
      await addToLane('case 1 of switch', 'http');
      await details().getByRole('textbox', { name: 'URL' }).fill(receiverUrl);
      await choose(details().getByLabel('Credential'), { label: 'Chat token (Bearer token)' });
      await details()
        .getByRole('textbox', { name: /^Body/ })
        .fill('{"repo": {{ $steps.set.repo }}, "commits": {{ $count($trigger.body.commits) }}}');
      // Then a loop over the commits, with a code step reading $item and $index.
      await addToLane('case 1 of switch', 'forEach');
      await pick('Items (a list)', /^body\.commits, array/);
      await addToLane('the loop of forEach', 'code');
      const editor = details().getByTestId('code-editor');
      await editor.locator('.cm-content').waitFor();
      await typeCode('return { id: $item.id, at: $index };');
      // Highlighted under the CSP: a token in a span with a highlight class.
      await expect
        .poll(() => editor.locator('.cm-line span[class]').count(), { message: 'highlighted tokens' })
        .toBeGreaterThan(0);
      await backToSteps();
      await click(page.getByRole('button', { name: 'Save', exact: true }));
      await page.getByRole('button', { name: 'Saved' }).waitFor();
      const built = clicks;
      console.log(`clicks to build the GitHub router at ${width} px: ${built}`);

      const saved = (await server.api('GET', `/api/v1/workflows/${workflow.id}`)).body as {
        version: number;
        steps: unknown[];
      };
      expect(saved.steps).toEqual([
        {
          name: 'switch',
          type: 'switch',
          value: '{{ headers.`x-github-event` }}',
          cases: [
            {
              equals: 'push',
              steps: [
                { name: 'set', type: 'set', fields: { repo: '{{ $trigger.body.repository.full_name }}' } },
                {
                  name: 'http',
                  type: 'http',
                  method: 'POST',
                  url: receiverUrl,
                  credential: expect.any(String),
                  body: { repo: '{{ $steps.set.repo }}', commits: '{{ $count($trigger.body.commits) }}' },
                },
                {
                  name: 'forEach',
                  type: 'forEach',
                  items: '{{ $trigger.body.commits }}',
                  steps: [{ name: 'code', type: 'code', source: 'return { id: $item.id, at: $index };' }],
                },
              ],
            },
          ],
        },
      ]);

      // Replay the push into the draft: every card says how its step did in that run.
      await click(page.getByTestId('trigger-card'));
      await click(details().getByRole('button', { name: 'Replay into draft' }));
      const v = saved.version;
      await page
        .getByTestId('last-run')
        .filter({ hasText: new RegExp(`v${v}, Replay into draft\\): Succeeded`) })
        .waitFor();
      for (const step of ['switch', 'set', 'http', 'forEach', 'code'])
        await expect.poll(() => runStatus(step), { message: step }).toBe('succeeded');
      await expect(cardButton('code').textContent()).resolves.toContain(`Succeeded in test run v${v}`);
      // The receiver got JSON, with the credential.
      expect(received.at(-1)).toEqual({
        authorization: `Bearer ${SECRET}`,
        contentType: 'application/json',
        body: JSON.stringify({ repo: 'acme/shop', commits: 2 }),
      });
      // The code step's output in its Last test output tab: the loop's first element.
      await backToSteps();
      await click(cardButton('code'));
      await click(details().getByRole('tab', { name: 'Last test output' }));
      await expect(
        details().getByRole('figure', { name: 'Test output of code' }).locator('pre').textContent(),
      ).resolves.toBe(JSON.stringify({ id: 'c1', at: 0 }, null, 2));

      // Broken: the code reads a field the commits lack; Run now saves first and the card fails.
      await click(details().getByRole('tab', { name: 'Settings' }));
      await typeCode('return { id: $item.author.name, at: $index };');
      await backToSteps();
      await click(page.getByRole('button', { name: 'Run now' }));
      await page
        .getByRole('status')
        .filter({ hasText: `Saved as draft v${v + 1}` })
        .waitFor();
      await expect.poll(() => runStatus('code')).toBe('failed');
      await expect(card('code').getByRole('note').textContent()).resolves.toContain(
        `Failed in the last test run (v${v + 1})`,
      );
      expect(await card('code').getAttribute('class')).toContain('step-failed');
      await page
        .getByTestId('last-run')
        .filter({ hasText: /Run now\): Failed/ })
        .waitFor();

      // Fixed on screen: the failure is stale (of v+1, before these edits), no longer red.
      await click(cardButton('code'));
      await typeCode('return { id: $item.id, message: $item.message, at: $index };');
      await backToSteps();
      await expect.poll(() => runStatus('code')).toBe('stale');
      await expect(cardButton('code').textContent()).resolves.toContain(
        `from v${v + 1}, before your unsaved edits`,
      );
      expect(await card('code').getAttribute('class')).not.toContain('step-failed');

      // The next run (Run now again, saving first) clears it.
      await click(page.getByRole('button', { name: 'Run now' }));
      await page
        .getByTestId('last-run')
        .filter({ hasText: new RegExp(`v${v + 2}, Run now\\): Succeeded`) })
        .waitFor();
      await expect.poll(() => runStatus('code')).toBe('succeeded');
      expect(await card('code').getByTestId('stale-result').count()).toBe(0);
      expect(await card('code').getByRole('note').count()).toBe(0);

      // A capture is a test run too: a pull_request takes no case, and the cards say so.
      await listenAndSend(workflow.trigger.testUrl, 'pull_request', { action: 'opened', number: 5 });
      await page
        .getByTestId('last-run')
        .filter({ hasText: /a capture\): Succeeded/ })
        .waitFor();
      await expect.poll(() => runStatus('switch')).toBe('succeeded');
      await expect.poll(() => runStatus('code')).toBe(null);

      // Opened again: the first step card is in view, and the last run is still on the cards.
      // (From the list, as a person opens it: a reload would restore the scroll position.)
      await page.goto(`${server.url}/`);
      await page.getByRole('link', { name, exact: true }).click();
      await cardButton('switch').waitFor();
      expect(await page.evaluate<number>('window.scrollY')).toBe(0);
      expect(await inViewport(cardButton('switch')), 'the first step card in view on opening').toBe(true);
      await page
        .getByTestId('last-run')
        .filter({ hasText: /a capture|before you opened/ })
        .waitFor();

      const width_ = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width_).toBeLessThanOrEqual(viewport.width);
      expect(problems).toEqual([]);
    }, 240_000);
  }
});

describe('the README screenshots of the editor', () => {
  it('are taken of the router with the push replayed, each card with its status', async () => {
    const list = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; name: string }[];
    };
    const router = list.items.find((w) => w.name === 'GitHub router 1366');
    expect(router, 'the desktop build above makes it').toBeDefined();
    await page.setViewportSize(DESKTOP);
    await page.goto(`${server.url}/workflows/${router!.id}`);
    // The push (the older of the two events), replayed: every step of its case ran.
    const showing = details().getByLabel('Showing');
    await choose(showing, { index: 1 });
    await click(details().getByRole('button', { name: 'Replay into draft' }));
    await page
      .getByTestId('last-run')
      .filter({ hasText: /Replay into draft\): Succeeded/ })
      .waitFor();
    await expect.poll(() => runStatus('code')).toBe('succeeded');
    await screenshot(page, 'editor-desktop', DESKTOP);
    await screenshot(page, 'editor-phone', PHONE);
    expect(problems).toEqual([]);
  }, 60_000);
});
