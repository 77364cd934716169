/**
 * Flow control in the browser (issue 18, SPEC 7b/11): a `switch` workflow built in the editor —
 * one URL routed by `{{ headers."x-github-event" }}` into a case per event type — saved, listened
 * to, called with two event types, and both branches seen in the editor's preview and on the
 * execution pages; at desktop and phone width (390 px). Screenshots go to docs/screenshots
 * (switch-editor.png, switch-execution.png, credentials.png, version-history.png).
 *
 * Then issue 19's UI: a credential created on the Credentials page and chosen in an http step
 * reaches a local receiver (and is never shown back), deleting it while in use says so, and an
 * old version is restored from the version history (a new draft) and published.
 *
 * Chromium (playwright-core) against a real hookflow serving the built UI (vite build first).
 */
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  DESKTOP,
  keepFailures,
  PHONE,
  screenshot as shoot,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import type { TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // http steps call a local receiver (standing in for a third-party API) over loopback.
  ({ server, browser, page } = await startBrowserTest({
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
    axe: true,
  }));
}, 120_000);

afterAll(() => stopBrowserTest({ browser, server }));

afterEach(keepFailures('e2e', () => page));

const screenshot = (name: string, viewport: { width: number; height: number }) => shoot(page, name, viewport);

/** No serious or critical axe-core violation, and nothing wider than the screen, at desktop and phone width. */
async function checkPage(name: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    expect(await axeViolations(page), `${name} at ${viewport.width}`).toEqual([]);
    const width = await page.evaluate<number>('document.documentElement.scrollWidth');
    expect(width, `${name} at ${viewport.width}`).toBeLessThanOrEqual(viewport.width);
  }
  await page.setViewportSize(DESKTOP);
}

/** On the workflow list, signed in as the owner (the account is created on first use: each test may run alone). */
const signedIn = () => signInAsOwner(page, server);

/** A section of the editor (a branch) by the start of its heading. */
const branch = (name: RegExp) => page.getByRole('region', { name });
/** A step's card in the flow, by the step's name; choosing it shows its settings in the side panel. */
const card = (name: string) =>
  page
    .locator('.step-card-button')
    .filter({ has: page.locator('.flow-card-title', { hasText: new RegExp(`^${name}$`) }) });

/** Shows the trigger's details (URLs, Listen) in the side panel again. */
async function showTrigger(): Promise<void> {
  await page.getByTestId('trigger-card').click();
}

async function sendEvent(testUrl: string, event: string, body: unknown): Promise<void> {
  await showTrigger();
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
    await signedIn();
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
    // Steps go into a case from its lane in the flow; the new step's settings take the side panel.
    const lane1 = page.getByRole('region', { name: 'case 1 of switch' });
    await lane1.getByLabel('Add a step to case 1 of switch').selectOption('set');
    await lane1.getByRole('button', { name: 'Add the step to case 1 of switch' }).click();
    // The new step's card has the focus, for keyboard users.
    await expect
      .poll(() => page.evaluate<string>('document.activeElement?.textContent ?? ""'))
      .toContain('Set fields');
    await page.getByRole('textbox', { name: 'Field name' }).fill('kind');
    await page.getByRole('textbox', { name: 'Value of kind' }).fill('commits: {{ $count(body.commits) }}');
    // Case 2: equals "issues", its set step reads the body.
    await card('switch').click();
    await page.getByRole('button', { name: '+ Add a case' }).click();
    const case2 = branch(/^Case 2/);
    await case2.getByLabel('Equals').fill('issues');
    const lane2 = page.getByRole('region', { name: 'case 2 of switch' });
    await lane2.getByLabel('Add a step to case 2 of switch').selectOption('set');
    await lane2.getByRole('button', { name: 'Add the step to case 2 of switch' }).click();
    await page.getByRole('textbox', { name: 'Field name' }).fill('kind');
    await page.getByRole('textbox', { name: 'Value of kind' }).fill('issue {{ body.issue.number }}');
    // The lane shows its step in one line.
    await lane2.getByText('Sets kind').waitFor();
    // A third step in a branch, then removed: the focus goes to the card before it in the branch.
    await lane2.getByLabel('Add a step to case 2 of switch').selectOption('fail');
    await lane2.getByRole('button', { name: 'Add the step to case 2 of switch' }).click();
    await page.getByRole('button', { name: 'Remove fail' }).click();
    await expect
      .poll(() => page.evaluate<string>('document.activeElement?.textContent ?? ""'))
      .toContain('Set fields');
    expect(await lane2.locator('.step-card-button').count()).toBe(1);
    // The default: a fail step with a message.
    const fallback = page.getByRole('region', { name: 'the default of switch' });
    await fallback.getByLabel('Add a step to the default of switch').selectOption('fail');
    await fallback.getByRole('button', { name: 'Add the step to the default of switch' }).click();
    await page
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
    await card('switch').click();
    await case2.getByText('taken by the event on screen').waitFor();
    expect(await case1.getByText('taken by the event on screen').count()).toBe(0);
    await screenshot('switch-editor', DESKTOP);
    await checkPage('switch editor');

    // Both executions, each with its branch.
    await page.getByRole('link', { name: 'Executions', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Executions', exact: true }).waitFor();
    const rows = page.getByRole('link', { name: /^Execution / });
    await expect.poll(() => rows.count()).toBe(2);
    // Searched by a field of the trigger item: only the issues event.
    await page.getByLabel('Trigger field = value').fill('body.issue.number=7');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(page.url()).toContain('where=body.issue.number%3D7');
    // Not a searchable field of the workflow: the page says so and how to index it.
    await page
      .getByRole('status')
      .filter({ hasText: 'Not indexed' })
      .getByText(/declare/)
      .waitFor();
    await page.getByLabel('Trigger field = value').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
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
    await checkPage('switch execution');

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

describe('a loop with a code step in the browser', () => {
  it('offers $item fields inside a forEach, edits code in CodeMirror, and shows each iteration with its console lines', async () => {
    await signedIn();
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('Order lines');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Workflow name').waitFor();
    await page.getByRole('button', { name: '+ For each' }).click();
    await page.getByRole('textbox', { name: 'Items (a list)' }).fill('{{ body.lines }}');
    // A first event, so the picker knows the shape of a line.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const list = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; name: string; steps: unknown[]; trigger: { testUrl: string } }[];
    };
    const workflow = list.items.find((w) => w.name === 'Order lines')!;
    const order = {
      lines: [
        { sku: 'A-1', qty: 2 },
        { sku: 'B-2', qty: 5 },
      ],
    };
    await sendEvent(workflow.trigger.testUrl, 'order', order);

    // The picker offers the list itself, not only the fields of its elements.
    await card('forEach').click();
    const items = page.getByRole('textbox', { name: 'Items (a list)' });
    await items.fill('');
    await page.getByRole('button', { name: 'Insert field into Items (a list)' }).click();
    await page.getByRole('button', { name: /^body\.lines, array/ }).click();
    expect(await items.inputValue()).toBe('{{ body.lines }}');

    // A set step in the loop, its field picked from the element: $item.sku.
    // The loop's lane in the flow takes its steps; each new step's settings open in the side panel.
    const loop = page.getByRole('region', { name: 'the loop of forEach' });
    const panel = page.locator('.side-panel');
    await loop.getByLabel('Add a step to the loop of forEach').selectOption('set');
    await loop.getByRole('button', { name: 'Add the step to the loop of forEach' }).click();
    await panel.getByRole('button', { name: 'Insert field into Value' }).click();
    await page.getByRole('button', { name: /^\$item\.sku, string/ }).click();
    expect(await panel.getByRole('textbox', { name: 'Value of sku' }).inputValue()).toBe('{{ $item.sku }}');
    await panel.getByRole('button', { name: 'Add field' }).click();
    await panel.getByRole('textbox', { name: 'Field name 2' }).fill('qty');
    await panel.getByRole('textbox', { name: 'Value of qty' }).fill('{{ $item.qty }}');
    // A code step after it, typed in the code editor.
    await loop.getByLabel('Add a step to the loop of forEach').selectOption('code');
    await loop.getByRole('button', { name: 'Add the step to the loop of forEach' }).click();
    // CodeMirror (loaded on first use) replaces the plain textarea.
    await panel.locator('.cm-content').waitFor();
    const editor = panel.getByRole('textbox', { name: 'JavaScript of code' });
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(
      "console.log('line', $input.sku);\nreturn { ...$input, total: $input.qty * 2 };",
    );
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const saved = (await server.api('GET', `/api/v1/workflows/${workflow.id}`)).body as { steps: unknown[] };
    expect(saved.steps).toEqual([
      {
        name: 'forEach',
        type: 'forEach',
        items: '{{ body.lines }}',
        steps: [
          { name: 'set', type: 'set', fields: { sku: '{{ $item.sku }}', qty: '{{ $item.qty }}' } },
          {
            name: 'code',
            type: 'code',
            source: "console.log('line', $input.sku);\nreturn { ...$input, total: $input.qty * 2 };",
          },
        ],
      },
    ]);

    // The next event's test run: the editor shows the code's console lines, the execution each iteration.
    await sendEvent(workflow.trigger.testUrl, 'order', order);
    await card('code').click();
    await panel.getByText('Console output in the last test run').waitFor();
    await expect(panel.getByRole('log').textContent()).resolves.toBe('line A-1');
    const executions = (await server.api('GET', `/api/v1/executions?workflowId=${workflow.id}`)).body as {
      items: { id: string }[];
    };
    await page.goto(`${server.url}/executions/${executions.items[0]!.id}`);
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();
    await page.getByText('2 iterations').waitFor();
    const iterations = page.getByRole('list', { name: 'Iterations of forEach' });
    await expect(iterations.getByRole('log').allTextContents()).resolves.toEqual(['line A-1', 'line B-2']);
    await expect(
      page.getByRole('figure', { name: 'Output of forEach' }).locator('pre').textContent(),
    ).resolves.toBe(
      JSON.stringify(
        [
          { sku: 'A-1', qty: 2, total: 4 },
          { sku: 'B-2', qty: 5, total: 10 },
        ],
        null,
        2,
      ),
    );
    await checkPage('execution with iterations');
  }, 120_000);
});

describe("the code editor under the page's own CSP", () => {
  // The other tests bypass the CSP (axe-core is injected inline); this one keeps it, as users have it.
  it('renders highlighted code with line numbers in a gutter beside it, one focus ring, a live syntax check, and no CSP error', async () => {
    await signedIn();
    const created = (
      await server.api('POST', '/api/v1/workflows', {
        name: 'Code under CSP',
        steps: [
          { name: 'shape', type: 'code', source: "const total = 2; // two\nreturn { total, label: 'x' };" },
        ],
      })
    ).body as { id: string };
    const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', timezoneId: 'UTC' });
    await context.addCookies(await page.context().cookies());
    const strict = await context.newPage();
    strict.setDefaultTimeout(10_000);
    const problems: string[] = [];
    strict.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    strict.on('pageerror', (e) => problems.push(e.message));
    try {
      for (const viewport of [DESKTOP, PHONE]) {
        await strict.setViewportSize(viewport);
        await strict.goto(`${server.url}/workflows/${created.id}`);
        // The step's card opens its settings: in the side panel, or a full-screen sheet on a phone.
        await strict.locator('.step-card-button', { hasText: 'shape' }).click();
        const editor = strict.getByTestId('code-editor');
        await editor.locator('.cm-content').waitFor();
        await editor.scrollIntoViewIfNeeded();
        // Line numbers in a gutter left of the code, on the same rows.
        const gutter = (await editor.locator('.cm-gutters').boundingBox())!;
        const content = (await editor.locator('.cm-content').boundingBox())!;
        expect(gutter.x + gutter.width, `gutter beside the code at ${viewport.width}`).toBeLessThanOrEqual(
          content.x + 1,
        );
        expect(Math.abs(gutter.y - content.y), `same rows at ${viewport.width}`).toBeLessThan(10);
        const firstNumber = (await editor
          .locator('.cm-lineNumbers .cm-gutterElement', { hasText: '1' })
          .first()
          .boundingBox())!;
        const firstLine = (await editor.locator('.cm-line').first().boundingBox())!;
        expect(Math.abs(firstNumber.y - firstLine.y)).toBeLessThan(6);
        // Highlighting: the keyword has a colour of its own.
        // (Strings, as the other page scripts here: this file is type-checked without the DOM library.)
        const colours = await strict.evaluate<{ line: string; keyword: string | null }>(`(() => {
          const line = document.querySelector('[data-testid="code-editor"] .cm-line');
          const keyword = [...line.querySelectorAll('span')].find((s) => s.textContent === 'const');
          return { line: getComputedStyle(line).color, keyword: keyword ? getComputedStyle(keyword).color : null };
        })()`);
        expect(colours.keyword).not.toBeNull();
        expect(colours.keyword).not.toBe(colours.line);
        // One focus ring: the editor's, not a second one on the editable text inside it.
        await editor.locator('.cm-content').click();
        const rings = await strict.evaluate<{ editor: string; content: string }>(`(() => {
          const host = document.querySelector('[data-testid="code-editor"]');
          return {
            editor: getComputedStyle(host.querySelector('.cm-editor')).outlineStyle,
            content: getComputedStyle(host.querySelector('.cm-content')).outlineStyle,
          };
        })()`);
        expect(rings).toEqual({ editor: 'solid', content: 'none' });
        const width = await strict.evaluate<number>('document.documentElement.scrollWidth');
        expect(width).toBeLessThanOrEqual(viewport.width);
      }
      // The live syntax check: broken code is marked in the gutter and said below, with where.
      await strict.keyboard.press('Control+End');
      await strict.keyboard.insertText('\nif (total {');
      const syntax = strict.getByTestId('code-syntax');
      await expect.poll(() => syntax.textContent()).toMatch(/does not parse here, line 3, column \d+\./);
      await strict.locator('.cm-lint-marker-error').first().waitFor();
      await strict.keyboard.press('Shift+Home');
      await strict.keyboard.press('Backspace');
      await strict.keyboard.press('Backspace');
      await syntax.waitFor({ state: 'detached' });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('a long loop in the browser', () => {
  it('shows the first 100 iterations and how many there were', async () => {
    await signedIn();
    const created = (
      await server.api('POST', '/api/v1/workflows', {
        name: 'Many lines',
        steps: [
          {
            name: 'each',
            type: 'forEach',
            items: '{{ [1..150] }}',
            steps: [{ name: 'double', type: 'set', fields: { n: '{{ $item * 2 }}' } }],
          },
        ],
      })
    ).body as { id: string; trigger: { testUrl: string } };
    await page.goto(`${server.url}/workflows/${created.id}`);
    await page.getByLabel('Workflow name').waitFor();
    await sendEvent(created.trigger.testUrl, 'order', {});
    let id: string | undefined;
    await expect
      .poll(async () => {
        const list = (await server.api('GET', `/api/v1/executions?workflowId=${created.id}`)).body as {
          items: { id: string; status: string }[];
        };
        id = list.items[0]?.id;
        return list.items[0]?.status;
      })
      .toBe('succeeded');
    await page.goto(`${server.url}/executions/${id}`);
    await page.getByText('150 iterations').waitFor();
    await page.getByText('the first 100 are shown').waitFor();
    const iterations = page.getByRole('list', { name: 'Iterations of each' });
    await expect(iterations.locator(':scope > li').count()).resolves.toBe(100);
  }, 60_000);
});

describe('a waiting execution in the browser', () => {
  it('shows the wait step and the time the execution resumes', async () => {
    await signedIn();
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('Remind later');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Workflow name').waitFor();
    await page.getByRole('button', { name: '+ Wait' }).click();
    await page.getByRole('textbox', { name: 'Seconds' }).fill('3600');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const list = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; name: string; steps: unknown[]; trigger: { testUrl: string } }[];
    };
    const workflow = list.items.find((w) => w.name === 'Remind later')!;
    expect(workflow.steps).toEqual([{ name: 'wait', type: 'wait', seconds: 3600 }]);
    await sendEvent(workflow.trigger.testUrl, 'order', { id: 1 });
    let execution: { id: string; status: string; resumeAt: string | null } | undefined;
    await expect
      .poll(
        async () => {
          const page_ = (await server.api('GET', `/api/v1/executions?workflowId=${workflow.id}`)).body as {
            items: { id: string; status: string; resumeAt: string | null }[];
          };
          execution = page_.items[0];
          return execution?.status;
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe('waiting');
    await page.goto(`${server.url}/executions/${execution!.id}`);
    await page.getByRole('heading', { name: /Execution\s*Waiting/ }).waitFor();
    // The resume time as the page formats times (UTC here), about an hour ahead.
    const resumeAt = new Date(execution!.resumeAt!);
    expect(resumeAt.getTime() - Date.now()).toBeGreaterThan(3_500_000);
    const note = page.getByTestId('waiting-note');
    await expect(note.textContent()).resolves.toMatch(/This execution is waiting until .*\d{2}:\d{2}/);
    await page.getByRole('heading', { name: /wait \(wait\)/ }).waitFor();
    await checkPage('waiting execution');
  }, 60_000);
});

describe('an error workflow in the browser', () => {
  it('is chosen in the settings, and a failed execution links to the error execution it started and back', async () => {
    await signedIn();
    // The error workflow: it only needs to exist (it runs whether or not it is active).
    const alerts = (await server.api('POST', '/api/v1/workflows', { name: 'Alerts' })).body as { id: string };
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('Fragile');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Workflow name').waitFor();
    await page.getByRole('button', { name: '+ Fail' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('broken on purpose');
    // The workflow's settings have a tab of their own.
    await page.getByRole('tablist', { name: 'Workflow' }).getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('Error workflow').selectOption({ label: 'Alerts' });
    // A searchable field (issue 19), saved in the same settings.
    await page.getByRole('button', { name: 'Add searchable field' }).click();
    await page.getByRole('textbox', { name: 'Searchable field 1' }).fill('body.order_id');
    // Concurrency (SPEC 7d): one key per customer, two at a time, in the same settings.
    await page.getByRole('textbox', { name: 'Concurrency key' }).fill('{{ body.customer }}');
    await page.getByRole('textbox', { name: 'At a time per key' }).fill('2');
    // Activating saves the edits first, and publishes them.
    await page.getByRole('switch', { name: 'Activated' }).click();
    await page.getByTestId('publish-state').getByText(/Live/).waitFor();
    const list = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; name: string; settings: unknown; trigger: { productionUrl: string } }[];
    };
    const fragile = list.items.find((w) => w.name === 'Fragile')!;
    expect(fragile.settings).toEqual({
      concurrency: { key: '{{ body.customer }}', limit: 2 },
      errorWorkflowId: alerts.id,
      searchFields: ['body.order_id'],
    });

    const res = await fetch(fragile.trigger.productionUrl, { method: 'POST', body: '{}' });
    const { executionId } = (await res.json()) as { executionId: string };
    let errorExecutionId: string | null = null;
    await expect
      .poll(
        async () => {
          const e = (await server.api('GET', `/api/v1/executions/${executionId}`)).body as {
            errorExecutionId: string | null;
          };
          errorExecutionId = e.errorExecutionId;
          return errorExecutionId;
        },
        { timeout: 20_000, interval: 250 },
      )
      .not.toBeNull();

    await page.goto(`${server.url}/executions/${executionId}`);
    await page.getByRole('heading', { name: /Execution\s*Failed/ }).waitFor();
    await page.getByRole('link', { name: 'an error workflow execution' }).click();
    await page.getByRole('heading', { name: /Execution.*Error workflow/ }).waitFor();
    expect(page.url()).toContain(`/executions/${errorExecutionId}`);
    await page.getByRole('link', { name: new RegExp(`^execution ${executionId.slice(0, 8)}`) }).click();
    await page.getByRole('heading', { name: /Execution\s*Failed/ }).waitFor();
    expect(page.url()).toContain(`/executions/${executionId}`);

    // A call the trigger refuses (a JSON body that does not parse) is listed on the workflow's page.
    const refused = await fetch(fragile.trigger.productionUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"oops"',
    });
    expect(refused.status).toBe(400);
    await page.goto(`${server.url}/workflows/${fragile.id}`);
    await page.getByRole('tablist', { name: 'Workflow' }).getByRole('tab', { name: 'Settings' }).click();
    const panel = page.getByRole('region', { name: 'Refused calls' });
    // Kept in the store in the background: Refresh until it is there.
    await expect
      .poll(
        async () => {
          await panel.getByRole('button', { name: 'Refresh' }).click();
          return panel.getByRole('cell', { name: /POST production URL/ }).count();
        },
        { timeout: 10_000, interval: 500 },
      )
      .toBe(1);
    await panel.getByText('invalid_body').waitFor();
  }, 60_000);
});

describe('credentials and versions in the browser', () => {
  const SECRET = 's3cret-token-5f2a9c';
  let receiver: http.Server;
  const seen: (string | undefined)[] = [];
  let receiverUrl = '';

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('creates a credential, uses it in an http step, never shows it, and refuses to delete it while in use', async () => {
    await signedIn();
    await page.goto(`${server.url}/credentials`);
    await page.getByRole('heading', { name: 'Credentials', exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Receiver token');
    await page.getByLabel('Type').selectOption('bearer');
    await page.getByLabel('Token').fill(SECRET);
    expect(await page.getByLabel('Token').getAttribute('type')).toBe('password');
    await page.getByRole('button', { name: 'Create credential' }).click();
    await page.getByRole('rowheader', { name: /Receiver token/ }).waitFor();
    expect(await page.evaluate<string>('document.body.innerText')).not.toContain(SECRET);
    await screenshot('credentials', DESKTOP);
    await checkPage('credentials');

    // A workflow whose http step names it.
    await page.getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('Notify');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Workflow name').waitFor();
    await page.getByRole('button', { name: '+ HTTP request' }).click();
    // The URL starts empty (no literal "https://" to type after) and is checked as it is typed.
    const url = page.getByRole('textbox', { name: 'URL' });
    expect(await url.inputValue()).toBe('');
    await url.fill('example.com/hook');
    await page.getByText('must start with http:// or https://').waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    await url.fill('https://http://example.com/hook');
    await page.getByText('has the scheme twice').waitFor();
    await url.fill(receiverUrl);
    expect(await page.getByText('must start with http:// or https://').count()).toBe(0);
    expect(await url.getAttribute('aria-invalid')).toBeNull();
    await page.getByLabel('Credential').selectOption({ label: 'Receiver token (Bearer token)' });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const list = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; name: string; steps: { credential?: string }[]; trigger: { testUrl: string } }[];
    };
    const workflow = list.items.find((w) => w.name === 'Notify')!;
    const credentials = (await server.api('GET', '/api/v1/credentials')).body as { items: { id: string }[] };
    expect(workflow.steps[0]!.credential).toBe(credentials.items[0]!.id);

    // A test event runs the step: the receiver gets the secret, the execution shows it masked.
    await sendEvent(workflow.trigger.testUrl, 'ping', { hello: 1 });
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]).toBe(`Bearer ${SECRET}`);
    const executions = (await server.api('GET', `/api/v1/executions?workflowId=${workflow.id}`)).body as {
      items: { id: string }[];
    };
    await page.goto(`${server.url}/executions/${executions.items[0]!.id}`);
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();
    expect(await page.evaluate<string>('document.body.innerText')).not.toContain(SECRET);

    // Deleting it while the step names it: refused, and said so.
    await page.goto(`${server.url}/credentials`);
    await page.getByRole('button', { name: 'Delete Receiver token' }).click();
    const dialog = page.getByRole('dialog', { name: /Delete "Receiver token"/ });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByText('Still in use: not deleted').waitFor();
    await dialog.getByText(/used by a step of workflow/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('rowheader', { name: /Receiver token/ }).waitFor();

    // Rotating it: the next run sends the new value.
    await page.getByRole('button', { name: 'Rotate Receiver token' }).click();
    const rotate = page.getByRole('dialog', { name: /Rotate "Receiver token"/ });
    await rotate.getByLabel('New token').fill(`${SECRET}-2`);
    await rotate.getByRole('button', { name: 'Save new values' }).click();
    await page.getByText(/Rotated "Receiver token"/).waitFor();
    await page.goto(`${server.url}/workflows/${workflow.id}`);
    await page.getByLabel('Workflow name').waitFor();
    await sendEvent(workflow.trigger.testUrl, 'ping', { hello: 2 });
    await expect.poll(() => seen.length).toBe(2);
    expect(seen[1]).toBe(`Bearer ${SECRET}-2`);
  }, 120_000);

  it('restores an old version from the history as a new draft, and publishes it', async () => {
    const list = (await server.api('GET', '/api/v1/workflows')).body as {
      items: { id: string; name: string; version: number }[];
    };
    const workflow = list.items.find((w) => w.name === 'Notify')!;
    expect(workflow, 'the credential test makes this workflow').toBeDefined();
    await page.goto(`${server.url}/workflows/${workflow.id}`);
    await page.getByLabel('Workflow name').fill('Notify (renamed)');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const renamed = workflow.version + 1;

    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: /^Version history/ }).waitFor();
    await page.getByTestId(`version-${renamed}`).getByText('Latest (draft)').waitFor();
    // Who saved it: the signed-in account.
    await page.getByTestId(`version-${renamed}`).getByText('owner@example.com').waitFor();
    // The latest against the one before: the name changed.
    await page.getByRole('button', { name: `Compare v${workflow.version} with the latest` }).click();
    await page
      .getByTestId('version-changes')
      .filter({ hasText: `Version ${workflow.version} → Version ${renamed}: name.` })
      .waitFor();
    const name = page.getByTestId('version-diff').locator('.diff-field').filter({ hasText: 'name' });
    expect(await name.locator('del').textContent()).toContain('"Notify"');
    expect(await name.locator('ins').textContent()).toContain('"Notify (renamed)"');
    await screenshot('version-history', DESKTOP);
    await checkPage('version history');

    await page.getByRole('button', { name: `Restore v${workflow.version}` }).click();
    const restored = renamed + 1;
    await page.getByText(`Restored v${workflow.version} as draft v${restored}.`).waitFor();
    await page.getByTestId(`version-${restored}`).getByText('Latest (draft)').waitFor();
    const after = (await server.api('GET', `/api/v1/workflows/${workflow.id}`)).body as {
      name: string;
      version: number;
      publishedVersion: number | null;
    };
    expect(after).toMatchObject({ name: 'Notify', version: restored, publishedVersion: null });

    // Publish from the history asks first, with the same review as the editor's.
    await page.getByRole('button', { name: `Publish v${restored}` }).click();
    const dialog = page.getByRole('dialog', { name: `Publish draft v${restored}?` });
    // Never published: there is nothing to compare with, and the dialog says so.
    await dialog.getByText('Nothing was published before').waitFor();
    expect(
      (await server.api('GET', `/api/v1/workflows/${workflow.id}`)).body as {
        publishedVersion: number | null;
      },
    ).toMatchObject({ publishedVersion: null });
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByText(`Published v${restored}: live traffic runs it now.`).waitFor();
    await page.getByTestId(`version-${restored}`).getByText('Published').waitFor();
    const published = (await server.api('GET', `/api/v1/workflows/${workflow.id}`)).body as {
      publishedVersion: number;
    };
    expect(published.publishedVersion).toBe(restored);
  }, 60_000);
});
