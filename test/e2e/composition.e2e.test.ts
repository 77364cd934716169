/**
 * Sub-workflows and the data store in the browser (SPEC 7f): a caller and a callee (made through
 * the API), the caller run by its webhook; its execution page links the child's, and the child's
 * links back. The Data page lists the store's entries by prefix, edits a value and deletes an entry.
 * The editor builds a `store` and a `workflow` step with their forms: the target chosen from the
 * other workflows, its learned input offered by the field picker.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  axeViolations,
  EMAIL,
  keepFailures,
  PASSWORD,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import { createActiveWorkflow, createWorkflow, eventually, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ server, browser, page } = await startBrowserTest({ axe: true }));
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

  it('builds a store step and a workflow step with their forms, saves, runs and reads the result', async () => {
    // The target: its test event teaches the editor what input it takes.
    const target = await createWorkflow(server, {
      name: 'Tally order',
      steps: [{ name: 'tally', type: 'set', fields: { got: '{{ body.orderId }}', n: '{{ body.qty }}' } }],
    });
    expect((await server.api('POST', `/api/v1/workflows/${target.id}/publish`)).status).toBe(200);
    expect((await server.api('POST', `/api/v1/workflows/${target.id}/test-listener`)).status).toBe(201);
    const captured = await fetch(target.trigger.testUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'A-1', qty: 2 }),
    });
    expect(captured.status).toBe(200);
    await eventually(async () => {
      const res = await server.api('GET', `/api/v1/workflows/${target.id}/test-events`);
      return res.body.items.length === 1;
    });

    await page.goto(`${server.url}/`);
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Name of the new workflow').fill('Order intake');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Workflow name').waitFor();

    // A counter in the data store.
    await page.getByRole('button', { name: '+ Data store' }).click();
    await page.getByLabel('Step name').fill('count');
    await page.getByLabel('Operation').selectOption('increment');
    await page.getByRole('textbox', { name: 'Key', exact: true }).fill('orders:{{ $trigger.method }}');
    await page.getByRole('textbox', { name: 'By (blank: 1)' }).fill('{{ 2 + 1 }}');
    expect(await page.getByRole('textbox', { name: /^Value/ }).count()).toBe(0);

    // The sub-workflow: the target from the list (not this workflow), its input from the picker.
    await page.getByRole('button', { name: '+ Run a workflow' }).click();
    await page.getByLabel('Step name').fill('tally it');
    const targets = page.getByLabel('Workflow to run');
    await targets.locator('option', { hasText: 'Tally order' }).waitFor({ state: 'attached' });
    expect(await targets.locator('option').allTextContents()).not.toContain('Order intake');
    await targets.selectOption({ label: 'Tally order' });
    const input = page.getByRole('textbox', { name: 'Input (JSON or text)' });
    await input.fill('{');
    await page.getByRole('button', { name: 'Insert field into Input (JSON or text)' }).click();
    const offered = page.getByRole('group', { name: 'Input Tally order takes' });
    await offered.getByRole('button', { name: /^qty, (number|integer)/ }).waitFor();
    await offered.getByRole('button', { name: /^orderId, string/ }).click();
    expect(await input.inputValue()).toBe('{"orderId": "A-1"');
    await input.press('End');
    await input.pressSequentially(', "qty": "{{ $steps.count.value }}"}');
    expect(await page.getByRole('checkbox', { name: /^Wait for its result/ }).isChecked()).toBe(true);
    expect(await axeViolations(page), 'the workflow step form').toEqual([]);
    await page.locator('.step-card-button', { hasText: 'count' }).click();
    await page.getByLabel('Operation').waitFor();
    expect(await axeViolations(page), 'the store step form').toEqual([]);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();

    const list = (await server.api('GET', '/api/v1/workflows')).body.items as {
      id: string;
      name: string;
      steps: unknown[];
    }[];
    const caller = list.find((w) => w.name === 'Order intake')!;
    expect(caller.steps).toEqual([
      {
        name: 'count',
        type: 'store',
        op: 'increment',
        key: 'orders:{{ $trigger.method }}',
        by: '{{ 2 + 1 }}',
      },
      {
        name: 'tally it',
        type: 'workflow',
        workflowId: target.id,
        input: { orderId: 'A-1', qty: '{{ $steps.count.value }}' },
      },
    ]);

    // Run it: the counter counts, the target gets the input, its output is the step's.
    const active = await server.api('POST', `/api/v1/workflows/${caller.id}/activate`);
    expect(active.status).toBe(200);
    const res = await fetch(active.body.trigger.productionUrl, { method: 'POST' });
    const executionId = res.headers.get('x-hookflow-execution-id')!;
    const done = await finishedExecution(server, executionId, 30_000);
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((s: { name: string; output: unknown }) => [s.name, s.output])).toEqual([
      ['count', { value: 3 }],
      ['tally it', { got: 'A-1', n: 3 }],
    ]);

    await page.goto(`${server.url}/executions/${executionId}`);
    await page.getByText('tally it').first().click();
    await page.getByTestId('child-execution').waitFor();
    expect(await page.locator('main').textContent()).toContain('A-1');
  });
});
