/**
 * Variables and the reach of a workflow in the browser (SPEC 7e): the Variables page (a plain and a
 * secret variable created, edited, the secret never shown back, one deleted after a confirmation;
 * axe-clean and no sideways scrolling at desktop and phone width), then a webhook → sql → email
 * workflow built with the field picker from a captured test event — a real PostgreSQL database
 * and a real SMTP server (smtp-server) started here, their credentials made on the Credentials
 * page, `$vars` and `$secrets` picked and previewed — replayed into the draft, with the row in the
 * database and the message received as the test asserts.
 */
import type { Page } from 'playwright-core';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  type BrowserTest,
  DESKTOP,
  keepFailures,
  PHONE,
  signInAsOwner,
  startBrowserTest,
  stopBrowserTest,
} from '../helpers/browser.js';
import { addPostgresCredential, addSqlStep, newWorkflowWithTestEvent, pickField } from '../helpers/editor.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { leaves, parseMime, type SmtpTestServer, startSmtpServer } from '../helpers/smtp.js';

let t: BrowserTest;
let smtp: SmtpTestServer;
let database: TestDatabase;
let dbName: string;
let db: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  dbName = new URL(database.url).pathname.slice(1);
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  await db.query('create table orders (id integer primary key, customer text not null)');
  smtp = await startSmtpServer();
  t = await startBrowserTest({ axe: true, clipboard: true, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
}, 120_000);

afterAll(async () => {
  await stopBrowserTest(t ?? {});
  await smtp?.close();
  await db?.end();
  await database?.drop();
});

afterEach(keepFailures('variables', () => t?.page));

/** No serious or critical axe violation and no sideways scrolling, at desktop and phone width. */
async function checkLayout(page: Page, name: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect(await axeViolations(page), `${name} at ${viewport.width}`).toEqual([]);
    const sideways = await page.evaluate<boolean>(
      'document.documentElement.scrollWidth > document.documentElement.clientWidth',
    );
    expect(sideways, `${name} scrolls sideways at ${viewport.width}`).toBe(false);
  }
  await page.setViewportSize(DESKTOP);
}

async function openVariables(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Variables' }).click();
  await page.getByRole('heading', { name: 'Variables', exact: true }).waitFor();
}

/** A variable added on the Variables page, its row shown. */
async function addVariable(page: Page, name: string, value: string, secret: boolean): Promise<void> {
  await page.getByRole('button', { name: 'Add variable' }).click();
  const form = page.getByRole('form', { name: 'New variable' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Value').fill(value);
  if (secret) await form.getByLabel('Secret').check();
  await form.getByRole('button', { name: 'Save' }).click();
  await page.getByText(`Saved ${name}.`).waitFor();
  await page.getByRole('rowheader', { name: new RegExp(`^${name}`) }).waitFor();
}

describe('the Variables page', () => {
  it('creates, edits and deletes variables; a secret shows as *** and is never put back into a field', async () => {
    const { page, server } = t;
    await signInAsOwner(page, server);
    await openVariables(page);

    // The empty state says what variables are for and how to read them.
    await page.getByRole('heading', { name: 'No variables yet' }).waitFor();
    await page.getByText('{{ $vars.API_URL }}').waitFor();
    await page.getByText('{{ $secrets.SLACK_WEBHOOK_URL }}').waitFor();
    await checkLayout(page, 'variables, empty');

    // A name the API would refuse is refused at the field, before anything is sent.
    let puts = 0;
    page.on('request', (r) => {
      if (r.method() === 'PUT' && r.url().includes('/api/v1/variables/')) puts++;
    });
    await page.getByRole('button', { name: 'Add variable' }).click();
    const form = page.getByRole('form', { name: 'New variable' });
    await form.getByLabel('Name').fill('shop name');
    await form.getByLabel('Value').fill('Old name');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('The name may hold only capital letters A–Z, digits and _').waitFor();
    expect(await form.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    const nameId = await form.getByLabel('Name').getAttribute('id');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe(nameId);
    expect(puts).toBe(0);
    await checkLayout(page, 'variables, new');
    await form.getByLabel('Name').fill('SHOP_NAME');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved SHOP_NAME. Use it as {{ $vars.SHOP_NAME }}.').waitFor();
    const plain = page.getByRole('row', { name: /SHOP_NAME/ });
    await plain.getByText('Old name').waitFor();
    await plain.getByText('{{ $vars.SHOP_NAME }}').waitFor();

    // Edited: the plain value is shown in the field, changed, saved.
    await plain.getByRole('button', { name: 'Edit SHOP_NAME' }).click();
    const edit = page.getByRole('form', { name: 'Edit SHOP_NAME' });
    expect(await edit.getByLabel('Value').inputValue()).toBe('Old name');
    expect(await edit.getByLabel('Name').getAttribute('readonly')).not.toBeNull();
    await edit.getByLabel('Value').fill('Hookflow Shop');
    await edit.getByRole('button', { name: 'Save' }).click();
    await plain.getByText('Hookflow Shop').waitFor();

    // A secret: *** in the list, its value nowhere on the page.
    const hook = 'https://hooks.slack.com/services/T0000/B0000/s3cr3tXYZ';
    await addVariable(page, 'SLACK_WEBHOOK_URL', hook, true);
    const secret = page.getByRole('row', { name: /SLACK_WEBHOOK_URL/ });
    await secret.getByText('***').waitFor();
    await secret.getByText('{{ $secrets.SLACK_WEBHOOK_URL }}').waitFor();
    await secret.getByText('secret', { exact: true }).waitFor();
    expect(await page.evaluate<string>('document.body.innerText')).not.toContain('s3cr3t');

    // Editing it leaves the value empty; saved empty, "***" goes back and the server keeps the value.
    await secret.getByRole('button', { name: 'Edit SLACK_WEBHOOK_URL' }).click();
    const editSecret = page.getByRole('form', { name: 'Edit SLACK_WEBHOOK_URL' });
    expect(await editSecret.getByLabel('Value').inputValue()).toBe('');
    expect(await editSecret.getByLabel('Secret').isChecked()).toBe(true);
    await editSecret.getByText('leave this empty to keep it').waitFor();
    expect(await page.content()).not.toContain('s3cr3t');
    const sent = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/SLACK_WEBHOOK_URL'));
    await editSecret.getByRole('button', { name: 'Save' }).click();
    expect((await sent).postDataJSON()).toEqual({ value: '***', secret: true });
    await page
      .getByText('Saved SLACK_WEBHOOK_URL. Use it as {{ $secrets.SLACK_WEBHOOK_URL }} in an')
      .waitFor();
    const stored = await server.api('GET', '/api/v1/variables/SLACK_WEBHOOK_URL');
    expect(stored.body).toMatchObject({ value: '***', secret: true });
    await checkLayout(page, 'variables, list');

    // Deleted after a confirmation.
    await plain.getByRole('button', { name: 'Delete SHOP_NAME' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete SHOP_NAME?' });
    await dialog.getByText('$vars.SHOP_NAME').waitFor();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted SHOP_NAME.').waitFor();
    await plain.waitFor({ state: 'detached' });
    await secret.getByRole('button', { name: 'Delete SLACK_WEBHOOK_URL' }).click();
    await page
      .getByRole('dialog', { name: 'Delete SLACK_WEBHOOK_URL?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('heading', { name: 'No variables yet' }).waitFor();
  }, 120_000);
});

describe('a webhook → sql → email workflow built with the field picker', () => {
  it('writes the row and sends the message, with $vars and $secrets picked and previewed', async () => {
    const { page, server } = t;
    await signInAsOwner(page, server);

    // The variables the email uses: the shop's name, and a secret Bcc address.
    await openVariables(page);
    await addVariable(page, 'SHOP_NAME', 'Hookflow Shop', false);
    await addVariable(page, 'AUDIT_BCC', 'audit@example.com', true);

    // The database's and the mail server's credentials, on the Credentials page.
    await addPostgresCredential(page, 'Shop database', dbName);
    await page.getByLabel('Name', { exact: true }).fill('Shop mail');
    await page.getByLabel('Type').selectOption('smtp');
    await page.getByLabel('Host').fill(smtp.host);
    await page.getByLabel('Port').fill(String(smtp.port));
    await page.getByLabel('Security').selectOption('none');
    await page.getByLabel('From').fill('Hookflow Shop <shop@example.com>');
    await page.getByRole('button', { name: 'Create credential' }).click();
    await page.getByRole('rowheader', { name: /Shop mail/ }).waitFor();

    // A workflow, and a test event for the picker to know the fields.
    const order = { id: 42, customer: 'Ada Lovelace', email: 'ada@example.com' };
    await newWorkflowWithTestEvent(page, 'Orders: store and receipt', order);

    // The sql step: credential, statement, both parameters from the picker (which offers $vars and,
    // in a parameter, $secrets).
    await addSqlStep(
      page,
      'Shop database (PostgreSQL)',
      'insert into orders (id, customer) values ($1, $2) returning id, customer',
    );
    await page.getByRole('button', { name: 'Insert field into $1' }).click();
    await page.getByRole('button', { name: /^\$vars\.SHOP_NAME, string, example "Hookflow Shop"/ }).waitFor();
    await page.getByRole('button', { name: /^\$secrets\.AUDIT_BCC, string, example "\*\*\*"/ }).waitFor();
    await page.getByRole('button', { name: /^body\.id, integer/ }).click();
    expect(await page.getByRole('textbox', { name: '$1' }).inputValue()).toBe('{{ body.id }}');
    await page.getByRole('button', { name: '+ Add parameter' }).click();
    await pickField(page, '$2', /^body\.customer, string/);
    expect(await page.getByRole('textbox', { name: '$2' }).inputValue()).toBe('{{ body.customer }}');

    // The email step, every field from the picker.
    await page.getByRole('button', { name: '+ Email' }).click();
    await page.getByLabel('Credential').selectOption({ label: 'Shop mail (SMTP server)' });
    await pickField(page, 'To', /^body\.email, string/);
    expect(await page.getByRole('textbox', { name: 'To', exact: true }).inputValue()).toBe(
      '{{ $trigger.body.email }}',
    );
    await page.getByRole('textbox', { name: 'Subject', exact: true }).fill('Your order at ');
    await pickField(page, 'Subject', /^\$vars\.SHOP_NAME, string/);
    expect(await page.getByRole('textbox', { name: 'Subject', exact: true }).inputValue()).toBe(
      'Your order at {{ $vars.SHOP_NAME }}',
    );
    await page.locator('.expr-preview', { hasText: 'Your order at Hookflow Shop' }).waitFor();
    await page.getByRole('textbox', { name: 'Text', exact: true }).fill('Thank you, ');
    await pickField(page, 'Text', /^body\.customer, string/);
    await page.locator('.expr-preview', { hasText: 'Thank you, Ada Lovelace' }).waitFor();
    await pickField(page, 'Bcc', /^\$secrets\.AUDIT_BCC, string/);
    expect(await page.getByRole('textbox', { name: 'Bcc', exact: true }).inputValue()).toBe(
      '{{ $secrets.AUDIT_BCC }}',
    );
    // A secret previews as ***; a field that does not send it offers no secret.
    const bccPreview = page.locator('.expr', {
      has: page.getByRole('textbox', { name: 'Bcc', exact: true }),
    });
    await bccPreview.locator('.expr-preview', { hasText: '***' }).waitFor();
    await page.getByRole('button', { name: 'Insert field into Timeout (ms)' }).click();
    await page.getByRole('button', { name: /^\$vars\.SHOP_NAME/ }).waitFor();
    expect(await page.getByRole('button', { name: /^\$secrets\./ }).count()).toBe(0);
    await page.keyboard.press('Escape');
    // Typed there anyway, it is flagged at the field before saving.
    const timeout = page.getByRole('textbox', { name: 'Timeout (ms)', exact: true });
    await timeout.fill('{{ $secrets.AUDIT_BCC }}');
    await page
      .locator('.field-error', { hasText: '$secrets can be used only where a secret is sent' })
      .waitFor();
    expect(await timeout.getAttribute('aria-invalid')).toBe('true');
    await timeout.fill('');

    // Saved, then the captured event replayed into the draft.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page
      .getByText(/Saved as draft v\d+/)
      .first()
      .waitFor();
    await page.getByTestId('trigger-card').click();
    await page.getByRole('button', { name: 'Replay into draft' }).click();
    // The replay is the last test run: its line links to the execution.
    const lastRun = page.getByTestId('last-run').filter({ hasText: /v\d+, Replay into draft\)/ });
    await lastRun.waitFor();
    await lastRun.getByRole('link', { name: 'Last test run' }).click();
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor({ timeout: 30_000 });
    const table = page.getByRole('table', { name: 'Rows of sql' });
    await table.waitFor();
    expect(await table.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual([
      '42',
      'Ada Lovelace',
    ]);

    // The row in the database, the message at the mail server (Bcc in the envelope only).
    expect((await db.query('select id, customer from orders')).rows).toEqual([
      { id: 42, customer: 'Ada Lovelace' },
    ]);
    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.from).toBe('shop@example.com');
    expect(mail.to.sort()).toEqual(['ada@example.com', 'audit@example.com']);
    const message = parseMime(mail.raw);
    expect(message.headers.get('to')).toBe('ada@example.com');
    expect(message.headers.get('subject')).toBe('Your order at Hookflow Shop');
    expect(message.headers.has('bcc')).toBe(false);
    const text = leaves(message).find((p) => (p.headers.get('content-type') ?? '').startsWith('text/plain'));
    expect(text?.body.toString('utf8')).toContain('Thank you, Ada Lovelace');
    // The secret is *** on the execution page.
    expect(await page.evaluate<string>('document.body.innerText')).not.toContain('audit@example.com');
  }, 180_000);
});
