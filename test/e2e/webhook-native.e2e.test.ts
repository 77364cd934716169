/**
 * Webhook-native capabilities in the browser (SPEC 7g): a provider handshake chosen in the
 * trigger's panel (Meta: its verify token asked for, saved as a secret), and the Settings tab's
 * trigger health — last call, the day's chart, an alert raised for a silence with a link to the
 * alert workflow's run, and the alert settings saved; a run waiting for a call shows its resume URL
 * on the execution page, copied with its button, and calling it resumes the run. Checked with
 * axe-core and at phone width.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  DESKTOP,
  keepFailures,
  PHONE,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
  type BrowserTest,
} from '../helpers/browser.js';
import { createActiveWorkflow, createWorkflow } from '../helpers/server.js';

let t: BrowserTest;
beforeAll(async () => {
  t = await startBrowserTest({ axe: true, clipboard: true });
}, 120_000);
afterAll(() => stopBrowserTest(t ?? {}));
afterEach(keepFailures('webhook-native', () => t?.page));

describe('webhook-native in the browser', () => {
  it("sets up Meta's handshake from the trigger's panel", async () => {
    const { page, server } = t;
    await signInAsOwner(page, server);
    const wf = await createWorkflow(server, { name: 'WhatsApp', trigger: { path: 'whatsapp' } });
    await page.goto(`${server.url}/workflows/${wf.id}`);
    await page.getByTestId('trigger-card').click();
    await page.getByLabel('Provider URL check').selectOption('meta');
    // The verify token is asked for before saving.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText("needs Meta's verify token").first().waitFor();
    await page.getByLabel('Verify token').fill('meatyhamhock');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const saved = (await server.api('GET', `/api/v1/workflows/${wf.id}`)).body;
    expect(saved.trigger).toMatchObject({ handshake: 'meta', handshakeToken: '***' });
    expect(saved.trigger.methods).toContain('GET');
    await page.reload();
    await page.getByTestId('trigger-card').click();
    await expect
      .poll(() => page.getByLabel('Verify token').getAttribute('placeholder'))
      .toBe('Saved; type to replace it');
  });

  it('shows the trigger health with an alert raised for a silence, and saves the alert settings', async () => {
    const { page, server } = t;
    const onCall = await createWorkflow(server, { name: 'On-call', trigger: { path: 'on-call' } });
    const wf = await createActiveWorkflow(server, {
      name: 'Stripe events',
      trigger: { path: 'stripe-health', alerts: { workflowId: onCall.id, silenceMinutes: 30 } },
    });
    expect((await fetch(`${server.url}/webhook/stripe-health`, { method: 'POST', body: 'a=1' })).status).toBe(
      200,
    );
    await server.hookflow.triggerHealth.sweep(Date.now() + 31 * 60_000);

    await page.goto(`${server.url}/workflows/${wf.id}`);
    await page.getByRole('tablist', { name: 'Workflow' }).getByRole('tab', { name: 'Settings' }).click();
    const panel = page.getByRole('region', { name: 'Trigger health' });
    await panel.getByRole('img', { name: /Calls per hour over the last 24 hours: 1 in all/ }).waitFor();
    await panel.getByRole('row', { name: /Silence.*No call for 30 minutes/ }).waitFor();
    await panel
      .getByRole('row', { name: /Silence/ })
      .getByRole('link', { name: 'Open' })
      .click();
    await page.getByRole('heading', { name: /Execution.*Alert workflow/ }).waitFor();

    await page.goBack();
    await page.getByRole('tablist', { name: 'Workflow' }).getByRole('tab', { name: 'Settings' }).click();
    await panel.getByLabel('Alert at refused calls per minute').fill('20');
    await panel.getByLabel(/Alert when a payload lacks/).check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved' }).waitFor();
    const saved = (await server.api('GET', `/api/v1/workflows/${wf.id}`)).body;
    expect(saved.trigger.alerts).toEqual({
      workflowId: onCall.id,
      silenceMinutes: 30,
      rejectionsPerMinute: 20,
      schemaDrift: true,
    });

    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.waitForTimeout(100);
      expect(await axeViolations(page), `at ${viewport.width}`).toEqual([]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );
    }
    await page.setViewportSize(DESKTOP);
  });

  it('makes a test from an execution, and the Publish dialog shows it failing on a changed draft', async () => {
    const { page, server } = t;
    const steps = (factor: number) => [
      { type: 'set', name: 'total', fields: { total: `{{ $number(body.qty) * ${factor} }}` } },
    ];
    const wf = await createActiveWorkflow(server, {
      name: 'Orders',
      trigger: { path: 'orders-tested' },
      steps: steps(2),
    });
    const res = await fetch(`${server.url}/webhook/orders-tested`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'qty=3',
    });
    const { executionId } = (await res.json()) as { executionId: string };
    await expect
      .poll(async () => (await server.api('GET', `/api/v1/executions/${executionId}`)).body.status, {
        timeout: 10_000,
      })
      .toBe('succeeded');

    await page.goto(`${server.url}/executions/${executionId}`);
    await page.getByRole('button', { name: 'Make a test' }).click();
    await page.getByText(/Test “Orders · .*” made/).waitFor();

    // A draft that changes the total.
    const { name, trigger, settings } = (await server.api('GET', `/api/v1/workflows/${wf.id}`)).body;
    expect(
      (await server.api('PUT', `/api/v1/workflows/${wf.id}`, { name, trigger, settings, steps: steps(3) }))
        .status,
    ).toBe(200);
    await page.goto(`${server.url}/workflows/${wf.id}`);
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish draft v2?' });
    await dialog.getByText('1 of 1 tests fail on draft v2.').waitFor();
    await dialog.getByText('gives another output').waitFor();
    expect(await dialog.getByText('"total": 9').count()).toBeGreaterThan(0);
    expect(await axeViolations(page), 'Publish dialog').toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The Settings tab lists it and runs it against the published version, which still passes.
    await page.getByRole('tablist', { name: 'Workflow' }).getByRole('tab', { name: 'Settings' }).click();
    const tests = page.getByRole('region', { name: 'Tests' });
    await tests.getByRole('button', { name: 'Run against the published version' }).click();
    await tests.getByText('All 1 tests pass on published v1.').waitFor();
  });

  it('shows the resume URL of a run waiting for a call; copied and called, it resumes the run', async () => {
    const { page, server } = t;
    await createActiveWorkflow(server, {
      name: 'Approvals',
      trigger: { path: 'approvals' },
      steps: [
        { type: 'wait', name: 'approval', for: 'call', timeoutSeconds: 3600 },
        { type: 'set', name: 'decision', fields: { decision: '{{ $.body.decision }}' } },
      ],
    });
    const res = await fetch(`${server.url}/webhook/approvals`, { method: 'POST' });
    const executionId = res.headers.get('x-hookflow-execution-id')!;
    await expect
      .poll(async () => (await server.api('GET', `/api/v1/executions/${executionId}`)).body.waitingFor?.for, {
        timeout: 10_000,
      })
      .toBe('call');

    await page.goto(`${server.url}/executions/${executionId}`);
    const waiting = page.getByRole('region', { name: 'What this execution waits for' });
    const shown = (await waiting.getByTestId('resume-url').textContent())!;
    expect(shown).toMatch(new RegExp(`^${server.url}/webhook-resume/${executionId}/[A-Za-z0-9_-]{43}$`));
    expect(await axeViolations(page), 'waiting execution').toEqual([]);
    await waiting.getByRole('button', { name: 'Copy the resume URL' }).click();
    await waiting.getByRole('button', { name: 'Copy the resume URL' }).getByText('Copied').waitFor();
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(copied).toBe(shown);

    const resumed = await fetch(copied, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approved' }),
    });
    expect(resumed.status).toBe(200);
    // The page follows the run to its end.
    await page.getByTestId('waiting-for').waitFor({ state: 'detached', timeout: 15_000 });
    await expect
      .poll(async () => (await server.api('GET', `/api/v1/executions/${executionId}`)).body.status, {
        timeout: 15_000,
      })
      .toBe('succeeded');
    await page.getByText('"approved"').first().waitFor();
  });
});
