/**
 * The API docs page (/api/docs, Swagger UI) still works under its Content-Security-Policy: in
 * Debian's chromium, driven by playwright-core, it renders the OpenAPI document and the browser
 * reports no violation of the policy (a blocked script or style would show here first).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium, stopBrowserTest } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
}, 60_000);

afterAll(() => stopBrowserTest({ browser, server }));

it('renders the API docs with no Content-Security-Policy violation', async () => {
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile))",
  );
  const res = await page.goto(`${server.url}/api/docs`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.locator('.swagger-ui .info .title').getByText('hookflow API').waitFor();
  // An operation of the document, expanded: Swagger UI's own scripts and styles at work.
  await page.locator('.opblock-summary-path', { hasText: '/api/v1/workflows' }).first().click();
  await page.locator('.opblock-body').first().waitFor();
  expect(violations).toEqual([]);
  await page.close();
}, 60_000);
