/**
 * Sub-workflows and the data store in the browser (SPEC 7f): a caller and a callee (made through
 * the API), the caller run by its webhook; its execution page links the child's, and the child's
 * links back. The Data page lists the store's entries by prefix, edits a value and deletes an entry.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { EMAIL, keepFailures, PASSWORD, startBrowserTest, stopBrowserTest } from '../helpers/browser.js';
import { createActiveWorkflow, createWorkflow, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ server, browser, page } = await startBrowserTest());
  await page.goto(`${server.url}/#setup-code=${server.setupCode}`);
  await page.getByRole('heading', { name: 'Create the owner account' }).waitFor();
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
}, 120_000);

afterAll(async () => {
  await stopBrowserTest({ browser, server });
});

afterEach(keepFailures('composition', () => page));

describe('composition in the UI', () => {
  it('follows the link from a caller’s execution to its sub-workflow’s and back', async () => {
    const callee = await createWorkflow(server, {
      name: 'Notify on-call',
      steps: [{ name: 'page', type: 'set', fields: { paged: '{{ body.summary }}' } }],
    });
    expect((await server.api('POST', `/api/v1/workflows/${callee.id}/publish`)).status).toBe(200);
    await createActiveWorkflow(server, {
      name: 'Failed payments',
      trigger: { path: 'payments' },
      steps: [
        {
          name: 'page on-call',
          type: 'workflow',
          workflowId: callee.id,
          input: { summary: 'card declined' },
        },
      ],
    });
    const res = await fetch(`${server.url}/webhook/payments`, { method: 'POST' });
    const parentId = res.headers.get('x-hookflow-execution-id')!;
    const parent = await finishedExecution(server, parentId);
    const childId = parent.steps[0].childExecutionId as string;

    await page.goto(`${server.url}/executions/${parentId}`);
    await page.getByText('page on-call').first().click();
    const child = page.getByTestId('child-execution');
    await child.waitFor();
    await child.click();
    await page.waitForURL(`**/executions/${childId}`);
    const back = page.getByTestId('parent-execution');
    await back.waitFor();
    expect(await back.textContent()).toContain(parentId.slice(0, 8));
    await back.click();
    await page.waitForURL(`**/executions/${parentId}`);
  });

  it('browses, edits and deletes data store entries on the Data page', async () => {
    for (const [key, value] of [
      ['order:1', { total: 10 }],
      ['order:2', { total: 20 }],
      ['cursor', 'abc'],
    ] as const)
      expect((await server.api('PUT', `/api/v1/store/global/${key}`, { value })).status).toBe(200);

    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Data', exact: true }).click();
    await page.getByRole('heading', { name: 'Data', exact: true }).waitFor();
    await page.getByRole('rowheader', { name: 'cursor' }).waitFor();
    await page.getByLabel('Key starts with').fill('order:');
    await expect.poll(() => page.getByRole('rowheader').count()).toBe(2);

    await page.getByRole('button', { name: 'Edit order:1' }).click();
    await page.getByLabel('Value (JSON)').fill('{"total": 11}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved "order:1".').waitFor();
    expect((await server.api('GET', '/api/v1/store/global/order:1')).body.value).toEqual({ total: 11 });

    await page.getByRole('button', { name: 'Delete order:2' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted "order:2".').waitFor();
    expect((await server.api('GET', '/api/v1/store/global/order:2')).status).toBe(404);
  });
});
