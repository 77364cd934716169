/**
 * Every page of the UI in Chromium at 1366 and 390 px (SPEC 11): none scrolls sideways — an
 * execution whose http step sent and received long JSON (a long unbroken string, a wide object)
 * included — and axe-core finds no serious or critical violation on any. Along the way: a failed
 * execution links to its retry and back; Publish
 * and the version history show a changed `set` field highlighted with its old and new value, and
 * the Executions page's backlog line counts executions queued behind one whose http call a local
 * server holds.
 *
 * Chromium (playwright-core) against a real hookflow serving the built UI (vite build first), with
 * one execution in flight at a time (HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT=1), so a held call queues the
 * ones after it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  axeViolations,
  DESKTOP,
  keepFailures,
  PHONE,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import { createActiveWorkflow, eventually, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;
let remote: http.Server;
let remoteUrl: string;
/** Answers of /hold, kept until released. */
const held: http.ServerResponse[] = [];

const LONG = 'x'.repeat(3000);
/** A wide object: many keys, nested deep, long keys and values. */
const WIDE = Object.fromEntries(
  Array.from({ length: 30 }, (_, i) => [
    `field_with_a_rather_long_name_${i}`,
    { nested: { deeper: { deepest: `value-${i}-${'y'.repeat(120)}` } } },
  ]),
);

beforeAll(async () => {
  remote = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/hold') return void held.push(res);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ long: LONG, wide: WIDE }));
    });
  });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
  ({ server, browser, page } = await startBrowserTest({
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: '1' },
    axe: true,
  }));
  await signInAsOwner(page, server);
}, 120_000);

afterAll(async () => {
  for (const res of held.splice(0)) res.end('{}');
  await stopBrowserTest({ browser, server });
  remote?.closeAllConnections();
  await new Promise<void>((r) => remote?.close(() => r()) ?? r());
});

afterEach(keepFailures('pages', () => page));

/** No serious or critical axe-core violation, and no sideways scroll, at 1366 and 390 px. */
async function checkPage(name: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    expect(await axeViolations(page), `${name} at ${viewport.width}`).toEqual([]);
    const { scroll, client } = await page.evaluate<{ scroll: number; client: number }>(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    );
    expect(scroll, `${name} scrolls sideways at ${viewport.width}: ${await widest()}`).toBeLessThanOrEqual(
      client,
    );
  }
  await page.setViewportSize(DESKTOP);
}

/** The outermost elements wider than the page (what makes it scroll sideways), for the failure message. */
const widest = () =>
  page.evaluate<string>(`(() => {
    const limit = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.body.querySelectorAll('*')) {
      const right = el.getBoundingClientRect().right;
      const parent = el.parentElement.getBoundingClientRect().right;
      if (right > limit + 1 && parent <= limit + 1)
        out.push(el.tagName.toLowerCase() + '.' + [...el.classList].join('.') + ' (' + Math.round(right) + ' px)');
    }
    return out.slice(0, 5).join(', ');
  })()`);

async function visit(path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.getByRole('heading', { name: heading, level: 1 }).first().waitFor();
}

let longExecution: string;
let diffWorkflow: string;

describe('every page', () => {
  it('an execution with long JSON sent and received: no sideways scroll on any of its tabs', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'Long JSON',
      trigger: { path: 'long-json' },
      steps: [
        {
          name: 'call',
          type: 'http',
          method: 'POST',
          url: `${remoteUrl}/long/${'segment-'.repeat(20)}`,
          body: { long: LONG, wide: WIDE, from: '{{ body.who }}' },
        },
        {
          name: 'shape',
          type: 'set',
          fields: { long: '{{ $steps.call.body.long }}', wide: '{{ $steps.call.body.wide }}' },
        },
      ],
    });
    const res = await fetch(`${server.url}/webhook/long-json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ who: LONG, wide: WIDE }),
    });
    expect(res.status).toBe(200);
    longExecution = ((await res.json()) as { executionId: string }).executionId;
    expect((await finishedExecution(server, longExecution)).status).toBe('succeeded');
    expect(wf.id).toBeTruthy();

    await visit(`/executions/${longExecution}`, /Execution/);
    const call = page.locator('li.exec-step').filter({ has: page.getByRole('heading', { name: /call/ }) });
    await call.getByRole('tab', { name: 'Response' }).waitFor();
    await checkPage('execution (response)');
    await call.getByRole('tab', { name: 'Request' }).click();
    const sent = call.getByTestId('sent-request');
    await sent.waitFor();
    expect(await sent.textContent()).toContain(`POST ${remoteUrl}/long/`);
    expect(await sent.textContent()).toContain('application/json');
    await checkPage('execution (request)');
    await call.getByRole('tab', { name: 'Input' }).click();
    await checkPage('execution (input)');
  }, 120_000);

  it('Publish and the version history show the changed set field, old and new, highlighted', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'Diffed',
      trigger: { path: 'diffed' },
      steps: [{ name: 'value', type: 'set', fields: { value: 'one', kept: 'same' } }],
    });
    diffWorkflow = wf.id;
    const saved = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      steps: [
        { name: 'value', type: 'set', fields: { value: 'two', kept: 'same' } },
        { name: 'added', type: 'set', fields: { more: 1 } },
      ],
    });
    expect(saved.status).toBe(200);

    const expectHighlighted = async (scope: ReturnType<Page['locator']>) => {
      const change = scope.getByTestId('diff-step-value');
      await change.waitFor();
      expect(await change.locator('dt').allTextContents()).toEqual(['fields.value']);
      const old = change.locator('del.diff-old');
      const now = change.locator('ins.diff-new');
      expect(await old.textContent()).toContain('"one"');
      expect(await now.textContent()).toContain('"two"');
      const colours = await Promise.all(
        [old, now].map((el) =>
          el.evaluate(
            (e) =>
              (
                globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
              ).getComputedStyle(e).backgroundColor,
          ),
        ),
      );
      expect(colours[0]).not.toBe('rgba(0, 0, 0, 0)');
      expect(colours[1]).not.toBe('rgba(0, 0, 0, 0)');
      expect(colours[0]).not.toBe(colours[1]);
      expect(await scope.getByTestId('diff-step-added').textContent()).toContain('Added');
    };

    await visit(`/workflows/${wf.id}/versions`, /^Version history/);
    const compare = page.getByRole('region', { name: 'Compare two versions' });
    await expectHighlighted(compare);
    expect(await compare.getByTestId('version-changes').textContent()).toBe(
      'Version 1 → Version 2: 1 step added, 1 step changed.',
    );
    await checkPage('version history');
    await compare.getByRole('button', { name: 'Show the raw JSON' }).click();
    await compare.getByRole('figure', { name: 'Version 1' }).waitFor();
    await checkPage('version history (raw JSON)');

    // History's Publish asks with the same review as the editor's, and nothing is published until then.
    await page.getByRole('button', { name: 'Publish v2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish draft v2?' });
    await expectHighlighted(dialog.locator(':scope'));
    await checkPage('publish dialog (history)');
    expect((await server.api('GET', `/api/v1/workflows/${wf.id}`)).body.publishedVersion).toBe(1);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // The editor's Publish: the same review.
    await visit(`/workflows/${wf.id}`, /Diffed/);
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expectHighlighted(dialog.locator(':scope'));
    await checkPage('publish dialog (editor)');
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await server.api('GET', `/api/v1/workflows/${wf.id}`)).body.publishedVersion).toBe(2);
  }, 120_000);

  it('a failed execution links to its retry, and the retry back to it', async () => {
    await createActiveWorkflow(server, {
      name: 'Fails',
      trigger: { path: 'fails' },
      steps: [{ name: 'boom', type: 'fail', message: 'not yet' }],
    });
    const res = await fetch(`${server.url}/webhook/fails`, { method: 'POST' });
    const failed = ((await res.json()) as { executionId: string }).executionId;
    expect((await finishedExecution(server, failed)).status).toBe('failed');
    const retry = (await server.api('POST', `/api/v1/executions/${failed}/retry`)).body.executionId as string;
    await finishedExecution(server, retry);

    await visit(`/executions/${failed}`, /Execution/);
    await page.getByTestId('retried-as').click();
    await page.waitForURL(`**/executions/${retry}`);
    await page.getByTestId('retry-of').click();
    await page.waitForURL(`**/executions/${failed}`);
    await page.getByTestId('retried-as').waitFor();
    await checkPage('a failed execution with a retry');
  }, 60_000);

  it.each<[string, () => string, string | RegExp]>([
    ['workflows list', () => '/workflows', 'Workflows'],
    ['editor', () => `/workflows/${diffWorkflow}`, /Diffed/],
    ['executions list', () => '/executions', 'Executions'],
    ['credentials', () => '/credentials', 'Credentials'],
    ['API tokens', () => '/tokens', 'API tokens'],
    ['members', () => '/members', 'Members'],
    ['audit log', () => '/audit', 'Audit log'],
    ['data', () => '/data', 'Data'],
  ])(
    '%s: no sideways scroll, no serious axe violation',
    async (name, path, heading) => {
      await visit(path(), heading);
      await checkPage(name);
    },
    60_000,
  );

  it("the Executions page's backlog line counts the executions queued behind a held call", async () => {
    await createActiveWorkflow(server, {
      name: 'Held',
      trigger: { path: 'held' },
      steps: [{ name: 'slow', type: 'http', url: `${remoteUrl}/hold` }],
    });
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${server.url}/webhook/held`, { method: 'POST' })).status).toBe(200);
    // One in flight (its call held), two queued behind it.
    await eventually(async () => held.length === 1, 10_000);
    await visit('/executions', 'Executions');
    const backlog = page.getByRole('status', { name: 'Backlog' });
    await backlog
      .filter({ hasText: /^2 queued \(oldest waiting .+\) · 1 in flight$/ })
      .waitFor({ timeout: 15_000 });
    expect(await backlog.getByRole('link', { name: '2 queued' }).getAttribute('href')).toMatch(
      /\/executions\?status=queued$/,
    );
    await checkPage('executions list with a backlog');

    // Released, the backlog drains: the line says so at its next refresh (every 5 s).
    await eventually(async () => {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      const now = await backlogNow();
      return now.queued === 0 && now.inFlight === 0;
    }, 30_000);
    await backlog.filter({ hasText: /^0 queued · 0 in flight$/ }).waitFor({ timeout: 15_000 });
  }, 90_000);
});

async function backlogNow(): Promise<{ queued: number; inFlight: number }> {
  return (await server.api('GET', '/api/v1/executions/backlog')).body;
}
