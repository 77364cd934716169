/**
 * The browser tests' setup (test/e2e): Debian's chromium driven by playwright-core against a real
 * hookflow serving the built UI, and what those tests share — the owner's sign-in, screenshots,
 * axe-core, and what a failing test leaves in test-results/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import type { TestContext } from 'vitest';
import { freePort } from './process.js';
import { startTestServer, type TestServer } from './server.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');
export const CHROMIUM = process.env.HOOKFLOW_CHROMIUM ?? '/usr/bin/chromium';
export const DESKTOP = { width: 1366, height: 900 };
export const PHONE = { width: 390, height: 844 };
export const EMAIL = 'owner@example.com';
export const PASSWORD = 'correct horse battery';

type Viewport = { width: number; height: number };

/** chromium, headless, with a fresh temporary profile (playwright removes it on close). */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `No chromium at ${CHROMIUM}: install it (apt-get install chromium) or set HOOKFLOW_CHROMIUM.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface BrowserTest {
  server: TestServer;
  browser: Browser;
  context: BrowserContext;
  /** The context's first page, its default timeout 10 s. */
  page: Page;
}

export interface BrowserTestOptions {
  /** More of the server's environment. */
  env?: Record<string, string>;
  /**
   * `bypassCSP` for a page axe-core runs on: it is injected as an inline script, which the page's
   * CSP (rightly) forbids.
   */
  axe?: boolean;
  /** Clipboard permissions for the UI's Copy buttons. */
  clipboard?: boolean;
}

/**
 * The UI built (vite build → dist/web, so the run tests the current source), a server on a fixed
 * free port with HOOKFLOW_BASE_URL set to it (the URLs the UI shows are the ones a test calls),
 * chromium, and one page at desktop size in en-GB and UTC.
 */
export async function startBrowserTest(options: BrowserTestOptions = {}): Promise<BrowserTest> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `No chromium at ${CHROMIUM}: install it (apt-get install chromium) or set HOOKFLOW_CHROMIUM.`,
    );
  }
  execFileSync(
    process.execPath,
    ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startTestServer({
    env: { HOOKFLOW_PORT: String(port), HOOKFLOW_BASE_URL: url, ...options.env },
  });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const context = await browser.newContext({
      viewport: DESKTOP,
      locale: 'en-GB',
      timezoneId: 'UTC',
      ...(options.axe ? { bypassCSP: true } : {}),
    } satisfies BrowserContextOptions);
    if (options.clipboard)
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    return { server, browser, context, page };
  } catch (err) {
    await stopBrowserTest({ browser, server });
    throw err;
  }
}

/** Closes what startBrowserTest started (any part of it may be missing when the setup failed). */
export async function stopBrowserTest(test: Partial<Pick<BrowserTest, 'browser' | 'server'>>): Promise<void> {
  await test.browser?.close();
  await test.server?.close();
}

/**
 * An afterEach hook: a failing browser test leaves what the page showed in test-results/ (kept by
 * CI, ignored by git), as `<prefix>-<test name>.png` and `.txt` (its URL and text).
 */
export function keepFailures(prefix: string, page: () => Page | undefined) {
  return async ({ task }: TestContext): Promise<void> => {
    const tab = page();
    if (task.result?.state !== 'fail' || !tab) return;
    const dir = path.join(ROOT, 'test-results');
    fs.mkdirSync(dir, { recursive: true });
    const name = task.name.replace(/\W+/g, '-').slice(0, 60);
    await tab
      .screenshot({ path: path.join(dir, `${prefix}-${name}.png`), fullPage: true })
      .catch(() => undefined);
    fs.writeFileSync(
      path.join(dir, `${prefix}-${name}.txt`),
      `${tab.url()}\n\n${await tab.evaluate<string>('document.body.innerText').catch(() => '')}`,
    );
  };
}

/** The whole page at `viewport` into docs/screenshots/<name>.png; the page back at desktop size after. */
export async function screenshot(page: Page, name: string, viewport: Viewport): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize(viewport);
  // Let the layout settle at the new width (sticky header, wrapped rows).
  await page.evaluate('window.scrollTo(0, 0)');
  await page.waitForTimeout(150);
  await page.screenshot({
    path: path.join(SCREENSHOTS, `${name}.png`),
    fullPage: true,
    animations: 'disabled',
  });
  await page.setViewportSize(DESKTOP);
}

let axeSource: string | undefined;

/** axe-core's serious and critical violations on the page as it is (WCAG 2.x A/AA rules and best practices). */
export async function axeViolations(page: Page): Promise<{ id: string; help: string; nodes: string[] }[]> {
  if (!(await page.evaluate<boolean>('typeof window.axe !== "undefined"'))) {
    axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.addScriptTag({ content: axeSource });
  }
  return page.evaluate(`
    axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) })),
    )`);
}

/**
 * Signed in as the owner, whatever the page shows: the first start's setup, opened at the address
 * the server printed so that its setup code fills in the field (each test may run alone, so
 * whichever comes first creates the account); or the sign-in form; or the workflow list already.
 */
export async function signInAsOwner(page: Page, server: TestServer): Promise<void> {
  await page.goto(`${server.url}/#setup-code=${server.setupCode}`);
  const setup = page.getByRole('heading', { name: 'Create the owner account' });
  const login = page.getByRole('heading', { name: 'Sign in' });
  const list = page.getByRole('heading', { name: 'Workflows', exact: true });
  await setup.or(login).or(list).first().waitFor();
  if (await list.isVisible()) return;
  const first = await setup.isVisible();
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  if (first) await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: first ? 'Create account' : 'Sign in' }).click();
  await list.waitFor();
}
