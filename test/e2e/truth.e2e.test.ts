/**
 * "The editor tells the truth" (issue 17, points 4 and 6–10), in Debian's chromium driven by
 * playwright-core against a real hookflow serving the built UI, at desktop and phone (390 px) width:
 * a step that failed in the last test run is marked where it is, with its error and position, and
 * the steps after it are "Not run"; a path another active workflow owns is named (by name, with a
 * link) on Save; keys an expression leaves empty are named in the preview; the field picker, the
 * execution page and the lists fit a phone; every page has its own title, focus is never lost to
 * <body>, the live region follows the listener, and axe-core finds no serious or critical
 * violation; the bundle goes compressed, hashed assets are cached for a year, no source map is served.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  DESKTOP,
  EMAIL,
  keepFailures,
  PASSWORD,
  PHONE,
  ROOT,
  SCREENSHOTS,
  screenshot as shoot,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import type { TestServer } from '../helpers/server.js';

const WIDTHS = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const;

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ server, browser, page } = await startBrowserTest({ axe: true }));
}, 120_000);

afterAll(() => stopBrowserTest({ browser, server }));

const keepFailure = keepFailures('truth', () => page);
afterEach(async (ctx) => {
  await keepFailure(ctx);
  if (ctx.task.result?.state === 'fail' && page) await page.setViewportSize(DESKTOP);
});

/** No serious or critical violation, and no sideways scrolling, at desktop and at phone width. */
async function checkPage(tab: Page, name: string): Promise<void> {
  for (const [width, viewport] of WIDTHS) {
    await tab.setViewportSize(viewport);
    await tab.waitForTimeout(100);
    expect(await axeViolations(tab), `${name} at ${width} width`).toEqual([]);
    expect(await scrollWidth(tab), `${name} at ${width} width: ${await widest(tab)}`).toBeLessThanOrEqual(
      viewport.width,
    );
  }
  await tab.setViewportSize(DESKTOP);
}

/** The document title, once the page has loaded what it names (a workflow's name comes after the page). */
async function expectTitle(title: string): Promise<void> {
  await page
    .waitForFunction(`document.title === ${JSON.stringify(title)}`, undefined, { timeout: 5000 })
    .catch(() => undefined);
  expect(await page.title()).toBe(title);
}

/** The innermost elements reaching past the right edge of the window, to say what widens a page. */
const widest = (tab: Page) =>
  tab.evaluate<string>(`(() => {
    const w = document.documentElement.clientWidth;
    const over = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > w + 1);
    return over
      .filter((el) => !over.some((o) => o !== el && el.contains(o)))
      .slice(0, 5)
      .map((el) => el.tagName.toLowerCase() + '.' + [...el.classList].join('.') + ' ' + Math.round(el.getBoundingClientRect().right) + ' ' + (el.textContent || '').slice(0, 40))
      .join(' | ');
  })()`);

const scrollWidth = (tab: Page) => tab.evaluate<number>('document.documentElement.scrollWidth');

const screenshot = (name: string, viewport: { width: number; height: number }) => shoot(page, name, viewport);

/**
 * Scrolls `target` into view. React may replace the element between Playwright resolving the locator
 * and scrolling (a late fetch re-renders the step list), and `scrollIntoViewIfNeeded` does not
 * re-resolve on its own then, so a detached element is tried again.
 */
async function scrollTo(target: Locator) {
  for (let attempt = 1; ; attempt++) {
    try {
      await target.scrollIntoViewIfNeeded();
      return;
    } catch (error) {
      if (attempt >= 5 || !/not attached/i.test(String(error))) throw error;
    }
  }
}

/** The window at `viewport`, with `target` in the middle of it (a picture of one place, not the page). */
async function shotAt(target: Locator, name: string, viewport: { width: number; height: number }) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize(viewport);
  await scrollTo(target);
  // Its top just below the editor's sticky header.
  const box = (await target.boundingBox())!;
  await page.evaluate(`window.scrollBy(0, ${Math.round(box.y) - 130})`);
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), animations: 'disabled' });
  await page.setViewportSize(DESKTOP);
}

async function createWorkflow(body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await server.api('POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** One test event through a workflow's test URL (listener opened by the API); its execution id. */
async function testEvent(id: string, path_: string, body = 'param1=a&param2=b'): Promise<string> {
  expect((await server.api('POST', `/api/v1/workflows/${id}/test-listener`)).status).toBe(201);
  const res = await fetch(`${server.url}/webhook-test/${path_}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  expect(res.status).toBeLessThan(600);
  for (let i = 0; i < 100; i++) {
    const list = await server.api('GET', `/api/v1/executions?workflowId=${id}&limit=1`);
    const e = list.body.items[0];
    if (e && ['succeeded', 'failed', 'filtered'].includes(e.status)) return e.id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the test event did not finish');
}

/** Signed in as the owner, whatever the page shows (setup, sign-in form or the list). */
const signIn = () => signInAsOwner(page, server);

async function openEditor(id: string): Promise<void> {
  await page.goto(`${server.url}/workflows/${id}`);
  await page.getByLabel('Workflow name').waitFor();
}

/** A step's card in the flow, by the step's name: choosing it shows the step's settings in the panel or sheet. */
const stepCard = (name: string) =>
  page
    .locator('.step-card-button')
    .filter({ has: page.locator('.flow-card-title', { hasText: new RegExp(`^${name}$`) }) });

describe('delivery (issue 17 #10)', () => {
  it('sends the bundle precompressed to browsers that accept it, caches hashed assets for a year, serves no source map', async () => {
    const home = await fetch(`${server.url}/`, { headers: { accept: 'text/html' } });
    expect(home.headers.get('cache-control')).toBe('no-cache');
    const html = await home.text();
    const script = /src="\.(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const style = /href="\.(\/assets\/[^"]+\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();

    for (const asset of [script!, style!]) {
      const plain = await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.headers.get('content-encoding')).toBeNull();
      const plainSize = (await plain.arrayBuffer()).byteLength;
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('vary')).toMatch(/accept-encoding/i);

      for (const [accept, encoding] of [
        ['br, gzip', 'br'],
        ['gzip, deflate', 'gzip'],
      ]) {
        // fetch would decode the body: read the raw bytes with node:http instead.
        const res = await rawGet(`${server.url}${asset}`, { 'accept-encoding': accept! });
        expect(res.headers['content-encoding'], `${asset} ${accept}`).toBe(encoding);
        expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(res.headers['content-type']).toMatch(asset.endsWith('.js') ? /javascript/ : /text\/css/);
        // The 390 kB script goes as about a quarter of itself.
        expect(res.body.length, `${asset} ${encoding}`).toBeLessThan(plainSize * 0.4);
      }
    }

    // No source map: none is linked, none is served.
    const js = await (await fetch(`${server.url}${script}`)).text();
    expect(js).not.toMatch(/sourceMappingURL/);
    for (const accept of ['*/*', 'text/html']) {
      const map = await fetch(`${server.url}${script}.map`, { headers: { accept } });
      expect(map.status).toBe(404);
    }
    expect(fs.readdirSync(path.join(ROOT, 'dist/web/assets')).filter((f) => f.endsWith('.map'))).toEqual([]);
  });
});

async function rawGet(url: string, headers: Record<string, string>) {
  const { request } = await import('node:http');
  return new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      request(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
        .on('error', reject)
        .end();
    },
  );
}

describe('the editor tells the truth (issue 17)', () => {
  it('first start: the setup page has its own title and no serious accessibility violation', async () => {
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Create the owner account' }).waitFor();
    await expectTitle('Create the owner account · hookflow');
    await checkPage(page, 'setup page');

    // The setup code comes from the address's fragment, which leaves the address bar at once; a
    // wrong one gets the server's message and what to do.
    await page.goto(`${server.url}/#setup-code=0123456789abcdef0123456789abcdef`);
    const code = page.getByLabel('Setup code');
    await code.waitFor();
    expect(await code.inputValue()).toBe('0123456789abcdef0123456789abcdef');
    expect(new URL(page.url()).hash).toBe('');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    const refused = page.getByRole('alert');
    await refused.getByText('The setup code is wrong, or has expired.').waitFor();
    expect(await refused.textContent()).toContain('hookflow setup-code');
    await checkPage(page, 'setup page with a wrong code');

    await signIn();
    await expectTitle('Workflows · hookflow');
  }, 60_000);

  let failing: { id: string; name: string };
  let failedExecution: string;
  /** A workflow whose second step fails at run time, and its failed test execution (made once). */
  async function failingWorkflow() {
    if (failing) return;
    failing = await createWorkflow({
      name: 'Order sync',
      trigger: { path: 'truth/failing', methods: ['POST'] },
      steps: [
        { name: 'order', type: 'set', fields: { id: '{{ body.param1 }}' } },
        // Fails at run time, on the server: param1 is "a", not a number.
        {
          name: 'notify',
          type: 'http',
          method: 'POST',
          url: 'https://example.test/{{ $number($trigger.body.param1) }}',
        },
        { name: 'done', type: 'set', fields: { ok: true } },
      ],
    });
    failedExecution = await testEvent(failing.id, 'truth/failing');
  }

  it('marks a step that failed in the last test run where it is, with its error and position; later steps are "Not run"', async () => {
    await signIn();
    await failingWorkflow();
    const run = (await server.api('GET', `/api/v1/executions/${failedExecution}`)).body;
    expect(run.status).toBe('failed');
    const serverError = run.steps[1].error;
    expect(serverError?.position).toEqual(expect.any(Number));

    await openEditor(failing.id);
    const steps = page.locator('.area-steps li.step');
    const notify = steps.nth(1);
    const note = notify.getByRole('note');
    await note.waitFor();
    for (const [width, viewport] of WIDTHS) {
      await page.setViewportSize(viewport);
      await scrollTo(note);
      expect(await note.isVisible(), width).toBe(true);
      // Marked red, with the server's error, the field and the position in the expression.
      expect(await notify.getAttribute('class')).toContain('step-failed');
      const text = (await note.textContent()) ?? '';
      expect(text).toContain('Failed in the last test run (v1)');
      expect(text).toContain(serverError.message);
      expect(text).toContain('In url');
      expect(text).toContain(`at position ${serverError.position}`);
      expect(await note.getByRole('link', { name: 'last test run' }).getAttribute('href')).toBe(
        `/executions/${failedExecution}`,
      );
      // The step before ran; the one after did not, and says so.
      expect(await steps.nth(0).getAttribute('class')).not.toContain('step-failed');
      expect(await steps.nth(2).getByText('Not run in the last test run').isVisible()).toBe(true);
      // The http preview no longer shows a bare null as if all were well.
      expect(await notify.getByText('HTTP requests are sent only by the server').count()).toBe(0);
      expect(await scrollWidth(page), width).toBeLessThanOrEqual(viewport.width);
    }
    await page.setViewportSize(DESKTOP);
    await expectTitle('Order sync · hookflow');
    await shotAt(notify, 'failed-step-desktop', DESKTOP);
    await shotAt(notify, 'failed-step-phone', PHONE);

    // The execution page lists every step of the version: two ran, the third "Not run".
    await page.goto(`${server.url}/executions/${failedExecution}`);
    await page.getByRole('heading', { name: /Execution\s*Failed/ }).waitFor();
    await expectTitle('Execution failed · Order sync · hookflow');
    const items = page.locator('.execution li.step');
    await items.nth(2).waitFor();
    expect(await items.count()).toBe(3);
    const notRun = items.nth(2);
    expect(await notRun.getByText('Not run', { exact: true }).isVisible()).toBe(true);
    expect(await notRun.textContent()).toContain('done');
    expect(await notRun.textContent()).toContain('stopped when step "notify" failed');
    // One position convention: the page shows the expression as written, from the first character after {{.
    expect(await page.locator('.execution').textContent()).toContain(`at position ${serverError.position}`);
    await checkPage(page, 'execution detail');
    await screenshot('execution-failed-desktop', DESKTOP);
    await screenshot('execution-failed-phone', PHONE);
  }, 90_000);

  it('every main page has its own title and no serious or critical axe-core violation, at desktop and phone width', async () => {
    await signIn();
    await failingWorkflow();
    const pages: [string, string, () => Promise<unknown>][] = [
      ['/', 'Workflows · hookflow', () => page.getByRole('link', { name: 'Order sync' }).waitFor()],
      [`/workflows/${failing.id}`, 'Order sync · hookflow', () => page.locator('.step-run-error').waitFor()],
      [
        '/executions',
        'Executions · hookflow',
        () =>
          page
            .getByRole('link', { name: /^Execution / })
            .first()
            .waitFor(),
      ],
      [
        `/executions/${failedExecution}`,
        'Execution failed · Order sync · hookflow',
        () => page.locator('.not-run').waitFor(),
      ],
      ['/tokens', 'API tokens · hookflow', () => page.getByRole('heading', { name: 'API tokens' }).waitFor()],
      [
        '/credentials',
        'Credentials · hookflow',
        () => page.getByRole('heading', { name: 'Credentials', exact: true }).waitFor(),
      ],
      [
        `/workflows/${failing.id}/versions`,
        'Version history · Order sync · hookflow',
        () => page.getByRole('heading', { level: 1 }).first().waitFor(),
      ],
      [
        '/nowhere',
        'Page not found · hookflow',
        () => page.getByRole('heading', { name: 'Page not found' }).waitFor(),
      ],
    ];
    for (const [route, title, ready] of pages) {
      await page.goto(`${server.url}${route}`);
      await ready();
      await expectTitle(title);
      await checkPage(page, route);
    }
    // Titles follow in-app navigation too.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
    await page.getByRole('heading', { name: 'Executions', exact: true }).waitFor();
    await expectTitle('Executions · hookflow');

    // The sign-in page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectTitle('Sign in · hookflow');
    await checkPage(page, 'sign-in page');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
  }, 120_000);

  it('keeps the field picker inside a 390 px screen, and names "Insert field" buttons by their visible text', async () => {
    await signIn();
    await failingWorkflow();
    await openEditor(failing.id);
    for (const [width, viewport] of WIDTHS) {
      await page.setViewportSize(viewport);
      // The step's settings: in the side panel, or a sheet on a phone.
      await stepCard('order').click();
      const button = page.getByRole('button', { name: 'Insert field into Value of id' });
      await scrollTo(button);
      // The accessible name contains what the button shows (WCAG 2.5.3).
      expect((await button.textContent())?.replace(/\{ \}/, '').trim()).toBe('Insert field');
      await button.click();
      const panel = page.getByRole('dialog', { name: 'Insert field into Value of id' });
      await panel.waitFor();
      const box = (await panel.boundingBox())!;
      expect(box.x, width).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, width).toBeLessThanOrEqual(viewport.width);
      expect(await panel.getByRole('button', { name: /^body\.param1, string/ }).isVisible()).toBe(true);
      expect(await scrollWidth(page), width).toBeLessThanOrEqual(viewport.width);
      await page.keyboard.press('Escape');
      await panel.waitFor({ state: 'hidden' });
      if (width === 'phone') {
        await page.keyboard.press('Escape');
        await page.getByRole('dialog', { name: /order/ }).waitFor({ state: 'detached' });
      }
    }
    await page.setViewportSize(DESKTOP);
  }, 60_000);

  it('names the keys an expression leaves empty in the preview, instead of dropping them silently', async () => {
    await signIn();
    const wf = await createWorkflow({
      name: 'Missing values',
      trigger: { path: 'truth/missing', methods: ['POST'] },
      steps: [
        {
          name: 'post',
          type: 'http',
          method: 'POST',
          url: 'https://example.test/hook',
          body: { name: '{{ body.nothing }}', kept: '{{ body.param1 }}' },
        },
        { name: 'greet', type: 'set', fields: { greeting: 'Hi {{ body.nobody }}!' } },
      ],
    });
    await testEvent(wf.id, 'truth/missing');
    await openEditor(wf.id);
    await stepCard('post').click();
    const preview = page.locator('.expr-preview').filter({ hasText: 'kept' });
    await preview.waitFor();
    expect(await preview.locator('code').textContent()).toBe('{"kept":"a"}');
    expect(await preview.textContent()).toContain(
      'name — missing: body.nothing has no value (the key is left out)',
    );
    await stepCard('greet').click();
    const greeting = page.locator('.expr-preview').filter({ hasText: 'Hi !' });
    await greeting.waitFor();
    expect(await greeting.textContent()).toContain(
      'missing: body.nobody has no value (it is left empty in the text)',
    );
  }, 60_000);

  it('checks the path on Save: warns an inactive workflow, naming the active owner with a link; refuses an active one', async () => {
    await signIn();
    const owner = await createWorkflow({
      name: 'Payments live',
      trigger: { path: 'truth/owned', methods: ['POST'] },
    });
    expect((await server.api('POST', `/api/v1/workflows/${owner.id}/activate`)).status).toBe(200);

    // Inactive: the save goes through, and the editor warns at once, naming the owner by name.
    const draft = await createWorkflow({
      name: 'Payments draft',
      trigger: { path: 'truth/free', methods: ['POST'] },
    });
    await openEditor(draft.id);
    await page.getByLabel('Path', { exact: true }).fill('truth/owned');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const warning = page.getByTestId('path-conflict-warning');
    await warning.waitFor();
    expect(await warning.textContent()).toContain('Payments live');
    expect(await warning.textContent()).not.toContain(owner.id);
    expect(await warning.getByRole('link', { name: 'Payments live' }).getAttribute('href')).toBe(
      `/workflows/${owner.id}`,
    );
    expect((await server.api('GET', `/api/v1/workflows/${draft.id}`)).body.trigger.path).toBe('truth/owned');

    // Active: the server refuses the save; the error names the owner by name, linked, not by id.
    const active = await createWorkflow({
      name: 'Refunds',
      trigger: { path: 'truth/refunds', methods: ['POST'] },
    });
    expect((await server.api('POST', `/api/v1/workflows/${active.id}/activate`)).status).toBe(200);
    await openEditor(active.id);
    await page.getByLabel('Path', { exact: true }).fill('truth/owned');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await refused.waitFor();
    expect(await refused.textContent()).toContain(
      'Workflow Payments live is already active on POST /webhook/truth/owned',
    );
    expect(await refused.textContent()).not.toContain(owner.id);
    await refused.getByRole('link', { name: 'Payments live' }).waitFor();
    expect((await server.api('GET', `/api/v1/workflows/${active.id}`)).body.trigger.path).toBe(
      'truth/refunds',
    );
    await checkPage(page, 'editor with a refused save');

    // The link goes to the other workflow (after the leave guard: the refused edit is discarded).
    await refused.getByRole('link', { name: 'Payments live' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Discard changes' }).click();
    await page.waitForURL(`**/workflows/${owner.id}`);
    await expectTitle('Payments live · hookflow');
  }, 60_000);

  it('puts problems at their fields, with links from the summary, in the words of the UI', async () => {
    await signIn();
    const wf = await createWorkflow({
      name: 'Two steps',
      trigger: { path: 'truth/names', methods: ['POST'] },
      steps: [
        { name: 'first', type: 'set', fields: { a: '1' } },
        { name: 'second', type: 'set', fields: { b: '2' } },
      ],
    });
    await openEditor(wf.id);
    await stepCard('second').click();
    const second = page.getByLabel('Step name');
    await second.fill('first');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const summary = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await summary.waitFor();
    // The summary takes focus: the next move is in it.
    await expect
      .poll(() => page.evaluate<string>('document.activeElement?.textContent ?? ""'))
      .toContain('Not saved');
    // Once, at the name field (not at the bottom of the card, not twice).
    expect(await page.getByText('is used by another step').count()).toBe(2); // the field and the summary
    expect(await second.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await second.getAttribute('aria-describedby')) ?? '';
    const fieldError = page.locator(`[id="${describedBy.split(' ').pop()}"]`);
    expect(await fieldError.textContent()).toContain('is used by another step');
    expect(await summary.textContent()).not.toContain('send the request again');
    // The summary's link takes focus to the field, opening its step when another is shown (both
    // cards say "first" now: the first is the step of that name).
    await stepCard('first').first().click();
    await page.getByLabel('Workflow name').focus();
    // Steps counted from 1, named as they were saved.
    await summary.getByRole('link', { name: 'Step 2 (first) › name' }).click();
    // The step's panel opens first, then the field takes focus.
    const fieldId = await second.getAttribute('id');
    await expect.poll(() => page.evaluate<string>('document.activeElement.id')).toBe(fieldId);
  }, 60_000);

  it('never loses focus to <body>, keeps focus clear of the sticky header, and the live region follows the listener', async () => {
    await signIn();
    const wf = await createWorkflow({
      name: 'Focus',
      trigger: { path: 'truth/focus', methods: ['POST'] },
      steps: [
        { name: 'one', type: 'set', fields: { a: '1' } },
        { name: 'two', type: 'set', fields: { b: '2' } },
      ],
    });
    await openEditor(wf.id);
    // Removing a step: focus goes to the step that took its place, then to the panel's heading.
    await stepCard('one').click();
    await page.getByRole('button', { name: 'Remove one' }).click();
    await page.waitForFunction('document.activeElement && document.activeElement !== document.body');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toContain('Set fields');
    await page.getByRole('button', { name: 'Remove two' }).click();
    await page.waitForFunction('document.activeElement && document.activeElement !== document.body');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Steps');

    // Shift+Tab up the page: the focused element is never under the sticky header.
    await page.setViewportSize(PHONE);
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    const header = page.locator('.editor-head');
    const headerHeight = (await header.boundingBox())!.height;
    expect(headerHeight, 'the sticky header on a phone').toBeLessThanOrEqual(110);
    await page
      .getByRole('button', { name: /Add a step|\+ Set fields/ })
      .first()
      .focus();
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Shift+Tab');
      const hidden = await page.evaluate<string>(`(() => {
        const el = document.activeElement;
        const head = document.querySelector('.editor-head');
        if (!el || !head || head.contains(el) || el === document.body) return '';
        const r = el.getBoundingClientRect();
        const h = head.getBoundingClientRect();
        // Under the header while it is stuck to the top of the window.
        const under = h.top <= 1 && r.top < h.bottom - 1 && r.bottom > h.top;
        return under ? el.outerHTML.slice(0, 120) + ' top ' + Math.round(r.top) + ' head ' + Math.round(head.getBoundingClientRect().bottom) : '';
      })()`);
      expect(hidden, `focus step ${i}`).toBe('');
    }
    await page.setViewportSize(DESKTOP);

    // The live region says "Listening" while listening, and no longer once the listener is gone.
    const live = page.locator('.test-panel [aria-live="polite"]');
    await page.getByRole('button', { name: 'Listen for test event' }).click();
    await page.getByText('Waiting for a request on the test URL…').waitFor();
    expect(await live.textContent()).toMatch(/^Listening/);
    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}/test-listener`)).status).toBe(204);
    await page
      .getByText('Waiting for a request on the test URL…')
      .waitFor({ state: 'hidden', timeout: 15_000 });
    expect(await live.textContent()).not.toMatch(/Listening/);

    // Deleting a workflow from the list: focus goes to the list's heading.
    await page.goto(server.url);
    await page.getByRole('button', { name: 'Delete Focus' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete workflow' }).click();
    await page.getByText('Deleted "Focus"').waitFor();
    await page.waitForFunction('document.activeElement && document.activeElement !== document.body');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Workflows');
  }, 90_000);

  it('fits the executions list on a phone: every column in sight, no sideways scroll of the page or the table', async () => {
    await signIn();
    await failingWorkflow();
    await page.goto(`${server.url}/executions`);
    await page
      .getByRole('link', { name: /^Execution / })
      .first()
      .waitFor();
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(100);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    // The table does not scroll sideways inside its box either: each row stacks on a phone, every
    // cell inside the box.
    expect(
      await page.evaluate<number>(
        "(() => { const el = document.querySelector('.table-wrap'); return el.scrollWidth - el.clientWidth; })()",
      ),
    ).toBe(0);
    const wrapBox = (await page.locator('.table-wrap').first().boundingBox())!;
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: /^Execution / }) })
      .first();
    const cells = row.getByRole('cell');
    expect(await cells.count()).toBe(6);
    for (let i = 0; i < 6; i++) {
      const box = (await cells.nth(i).boundingBox())!;
      expect(box.x + box.width, `cell ${i}`).toBeLessThanOrEqual(wrapBox.x + wrapBox.width);
    }
    await screenshot('executions-phone', PHONE);
  }, 60_000);
});

describe('the editor shows the steps first', () => {
  it('opens on the flow: the trigger card, then the steps in the first screen; the trigger in a side panel or a sheet; settings in a tab', async () => {
    await signIn();
    const wf = await createWorkflow({
      name: 'Steps first',
      trigger: { path: 'truth/steps-first', methods: ['POST'] },
      steps: [
        { name: 'first', type: 'set', fields: { a: '{{ body.a }}' } },
        { name: 'second', type: 'set', fields: { b: '2' } },
      ],
    });
    await openEditor(wf.id);
    const firstStep = page.locator('.area-steps li.step').first();
    const card = page.getByTestId('trigger-card');
    for (const [width, viewport] of WIDTHS) {
      await page.setViewportSize(viewport);
      await page.evaluate('window.scrollTo(0, 0)');
      await firstStep.waitFor();
      // Without scrolling: the trigger card, and the first step right under it.
      const cardBox = (await card.boundingBox())!;
      const stepBox = (await firstStep.boundingBox())!;
      expect(cardBox.y + cardBox.height, width).toBeLessThanOrEqual(stepBox.y);
      // In the first screen, with room for its heading and first field.
      expect(stepBox.y + 150, `first step at ${width}`).toBeLessThan(viewport.height);
      expect(await scrollWidth(page), width).toBeLessThanOrEqual(viewport.width);
    }

    // Desktop: the trigger's details beside the steps, not above them.
    await page.setViewportSize(DESKTOP);
    await page.evaluate('window.scrollTo(0, 0)');
    const side = page.getByRole('region', { name: 'Trigger', exact: true });
    const listen = side.getByRole('button', { name: 'Listen for test event' });
    await listen.waitFor();
    const sideBox = (await side.boundingBox())!;
    const stepBox = (await firstStep.boundingBox())!;
    expect(sideBox.x).toBeGreaterThanOrEqual(stepBox.x + stepBox.width);
    expect(await side.getByRole('button', { name: 'Copy the test URL' }).isVisible()).toBe(true);
    await checkPage(page, 'editor, steps first');

    // Phone: the trigger card opens its details as a full-screen sheet, by keyboard too.
    await page.setViewportSize(PHONE);
    await page.evaluate('window.scrollTo(0, 0)');
    // The side panel goes once React has seen the narrower window (a matchMedia change): waited for.
    await side.waitFor({ state: 'detached' });
    await card.focus();
    await page.keyboard.press('Enter');
    const sheet = page.getByRole('dialog', { name: 'Trigger' });
    await sheet.waitFor();
    const sheetBox = (await sheet.boundingBox())!;
    expect(sheetBox.x).toBe(0);
    expect(sheetBox.width).toBe(PHONE.width);
    await sheet.getByRole('button', { name: 'Listen for test event' }).waitFor();
    await sheet.getByLabel('Path', { exact: true }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });
    expect(await page.evaluate<string | null>('document.activeElement?.dataset.testid ?? null')).toBe(
      'trigger-card',
    );
    await page.setViewportSize(DESKTOP);

    // The workflow's settings and refused calls: a tab of their own.
    expect(await page.getByLabel('Error workflow').count()).toBe(0);
    await page.getByRole('tablist', { name: 'Workflow' }).getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('Error workflow').waitFor();
    await page.getByRole('region', { name: 'Refused calls' }).waitFor();
    await checkPage(page, 'editor settings');
    await page.getByRole('tab', { name: 'Flow' }).click();
    await firstStep.waitFor();

    // Phone: a trigger field named by Save's error summary opens the sheet at that field.
    await page.setViewportSize(PHONE);
    await card.click();
    await sheet.getByLabel('Path', { exact: true }).fill('truth//bad');
    await sheet.getByRole('button', { name: 'Back to the steps' }).click();
    await sheet.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const summary = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await summary.waitFor();
    await expect(card.textContent()).resolves.toContain('Some trigger fields need fixing');
    await summary.getByRole('link', { name: /path/i }).first().click();
    await sheet.waitFor();
    await expect
      .poll(() => page.evaluate<string | null>('document.activeElement?.getAttribute("data-field") ?? null'))
      .toBe('/trigger/path');
    await sheet.getByLabel('Path', { exact: true }).fill('truth/steps-first');
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });
    await page.setViewportSize(DESKTOP);
  }, 90_000);
});

describe('the flow as cards, each step in the side panel', () => {
  /** The names on the top-level cards, in order. */
  const topNames = () =>
    page.locator('.step-flow > ol > li > .step-card-button .flow-card-title').allTextContents();
  const focused = () =>
    page.evaluate<string>(
      'document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent ?? ""',
    );

  async function router(): Promise<string> {
    const wf = await createWorkflow({
      name: 'Cards',
      trigger: { path: 'truth/cards', methods: ['POST'] },
      steps: [
        { name: 'first', type: 'set', fields: { a: '{{ body.param1 }}' } },
        {
          name: 'route',
          type: 'switch',
          value: '{{ body.param1 }}',
          cases: [{ equals: 'a', steps: [{ name: 'inner', type: 'set', fields: { x: '1' } }] }],
          default: [{ name: 'stop', type: 'fail', message: 'Unrouted {{ $trigger.body.param1 }}' }],
        },
        { name: 'last', type: 'set', fields: { b: '2' } },
      ],
    });
    // A test run down the default branch: `stop` fails it, `last` is never reached.
    await testEvent(wf.id, 'truth/cards', 'param1=b');
    return wf.id;
  }

  it('shows compact cards with lanes and the last run; a card opens its Settings and Last test output beside the flow or as a sheet', async () => {
    await signIn();
    const id = await router();
    await openEditor(id);
    const flow = page.locator('.area-steps');
    await stepCard('first').waitFor();
    for (const [width, viewport] of WIDTHS) {
      await page.setViewportSize(viewport);
      // The cards hold no settings: type, name and a one-line summary.
      expect(await flow.getByRole('textbox').count(), width).toBe(0);
      await expect(stepCard('first').textContent()).resolves.toMatch(/Set fields.*first.*Sets a/);
      await expect(stepCard('route').textContent()).resolves.toContain('On {{ body.param1 }} · 1 case');
      // The switch's lists as labelled lanes holding their own cards.
      const lane = flow.getByRole('region', { name: 'case 1 of route' });
      await expect(lane.textContent()).resolves.toMatch(/Case 1 = "?a"?/);
      expect(await lane.locator('.step-card-button').count()).toBe(1);
      const fallback = flow.getByRole('region', { name: 'the default of route' });
      // The last test run on the cards: the step that failed, and the one it never reached.
      await expect
        .poll(() => fallback.locator('.step-card-button').textContent(), { timeout: 10_000 })
        .toContain('Failed in test run v1');
      await expect(stepCard('last').textContent()).resolves.toContain('Not run in test run v1');
      expect(await scrollWidth(page), width).toBeLessThanOrEqual(viewport.width);
    }

    // Desktop: the card's settings beside the flow, in a Settings tab; its output in the other.
    await page.setViewportSize(DESKTOP);
    await stepCard('first').click();
    expect(await stepCard('first').getAttribute('aria-expanded')).toBe('true');
    const side = page.locator('.side-panel');
    await expect(side.getByRole('textbox', { name: 'Step name' }).inputValue()).resolves.toBe('first');
    const sideBox = (await side.boundingBox())!;
    const cardBox = (await stepCard('first').boundingBox())!;
    expect(sideBox.x).toBeGreaterThanOrEqual(cardBox.x + cardBox.width);
    expect(await side.getByRole('tab', { name: 'Settings' }).getAttribute('aria-selected')).toBe('true');
    await side.getByRole('tab', { name: 'Last test output' }).click();
    await expect(
      side.getByRole('figure', { name: 'Test output of first' }).locator('pre').textContent(),
    ).resolves.toContain('"a": "b"');
    // The failed step's output tab: its error from the last test run.
    await stepCard('stop').click();
    await side.getByRole('tab', { name: 'Last test output' }).click();
    await expect(side.getByRole('note').textContent()).resolves.toContain('Failed in the last test run (v1)');
    await expect(side.getByRole('note').textContent()).resolves.toContain('Unrouted b');
    // A branch's case values are edited in the switch's panel; its steps in the lanes.
    await stepCard('route').click();
    await side
      .getByRole('region', { name: /^Case 1/ })
      .getByLabel('Equals')
      .waitFor();
    await checkPage(page, 'editor, a step in the side panel');

    // Phone: the card opens a full-screen sheet; Back returns to the card.
    await page.setViewportSize(PHONE);
    await stepCard('route').click();
    const sheet = page.getByRole('dialog', { name: /Switch/ });
    await sheet.waitFor();
    const box = (await sheet.boundingBox())!;
    expect(box.x).toBe(0);
    expect(box.width).toBe(PHONE.width);
    await sheet.getByRole('textbox', { name: 'Value to route on' }).waitFor();
    await sheet.getByRole('tab', { name: 'Last test output' }).click();
    await sheet.getByRole('figure', { name: 'Test output of route' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await sheet.getByRole('button', { name: 'Back to the steps' }).click();
    await sheet.waitFor({ state: 'detached' });
    await expect.poll(focused).toContain('route');
    await page.setViewportSize(DESKTOP);
  }, 90_000);

  it('is driven by keyboard: Enter selects a card, Alt+arrows move it, Delete asks then removes it, and Tab reaches "Add step" after each card', async () => {
    await signIn();
    const id = await router();
    await openEditor(id);
    await stepCard('first').waitFor();
    for (const [width, viewport] of WIDTHS) {
      await page.setViewportSize(viewport);
      // The layout for this width first (the side panel exists only beside a wide flow): a card
      // focused before the re-render would be replaced under the key press.
      await page.locator('.side-panel').waitFor({ state: width === 'desktop' ? 'visible' : 'detached' });
      // Enter selects: the panel beside the flow, or the sheet on a phone (Escape returns).
      await stepCard('first').focus();
      await page.keyboard.press('Enter');
      const panel =
        width === 'desktop' ? page.locator('.side-panel') : page.getByRole('dialog', { name: /first/ });
      await expect(panel.getByRole('textbox', { name: 'Step name' }).inputValue()).resolves.toBe('first');
      if (width !== 'desktop') {
        await page.keyboard.press('Escape');
        await panel.waitFor({ state: 'detached' });
      }
      await expect.poll(focused, { message: width }).toContain('first');
      // Alt+Down and Alt+Up move the card, which keeps the focus.
      await page.keyboard.press('Alt+ArrowDown');
      await expect.poll(topNames, { message: width }).toEqual(['route', 'first', 'last']);
      await expect.poll(focused, { message: width }).toContain('first');
      await page.keyboard.press('Alt+ArrowUp');
      await expect.poll(topNames, { message: width }).toEqual(['first', 'route', 'last']);
      // Tab from a card reaches the "Add step" after it, which offers the step types.
      await page.keyboard.press('Tab');
      await expect.poll(focused, { message: width }).toBe('Add step after first');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      await expect.poll(focused, { message: width }).toBe('Set fields');
      await page.keyboard.press('Enter');
      await expect.poll(topNames, { message: width }).toEqual(['first', 'set', 'route', 'last']);
      if (width !== 'desktop') {
        // The new step's settings opened in the sheet.
        const sheet = page.getByRole('dialog', { name: /Set fields/ });
        await sheet.getByRole('textbox', { name: 'Step name' }).waitFor();
        await page.keyboard.press('Escape');
        await sheet.waitFor({ state: 'detached' });
      }
      // Delete asks first: Keep it keeps the step, Remove removes it and focuses the next card.
      await stepCard('set').focus();
      await page.keyboard.press('Delete');
      const ask = page.getByRole('dialog', { name: 'Remove step set?' });
      await ask.waitFor();
      expect(await axeViolations(page), width).toEqual([]);
      await ask.getByRole('button', { name: 'Keep it' }).click();
      await expect.poll(topNames, { message: width }).toEqual(['first', 'set', 'route', 'last']);
      await expect.poll(focused, { message: width }).toContain('set');
      await page.keyboard.press('Delete');
      await ask.getByRole('button', { name: 'Remove', exact: true }).click();
      await expect.poll(topNames, { message: width }).toEqual(['first', 'route', 'last']);
      await expect.poll(focused, { message: width }).toContain('route');
      expect(await scrollWidth(page), width).toBeLessThanOrEqual(viewport.width);
    }
    await page.setViewportSize(DESKTOP);
  }, 90_000);
});
