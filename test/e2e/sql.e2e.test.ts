/**
 * The `sql` step in the browser (SPEC 7e, issue 36): a PostgreSQL credential made on the
 * Credentials page, then a webhook → sql workflow built in the editor — the credential picked,
 * the statement typed into the code editor (SQL highlighted under the page's CSP), both
 * parameters mapped from a captured test event with the field picker — activated, called, and its
 * execution's rows read as a table. The row is in the database afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL, keepFailures, PASSWORD, startBrowserTest, stopBrowserTest } from '../helpers/browser.js';
import { addPostgresCredential, addSqlStep, newWorkflowWithTestEvent, pickField } from '../helpers/editor.js';
import { PG_ADMIN_URL } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;
const dbName = `hookflow_sqlui_${randomBytes(5).toString('hex')}`;
let db: pg.Client;

beforeAll(async () => {
  const root = new pg.Client({ connectionString: PG_ADMIN_URL });
  await root.connect();
  await root.query(`create database ${dbName}`);
  await root.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${dbName}`;
  db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  await db.query('create table orders (id integer primary key, customer text not null)');
  ({ server, browser, page } = await startBrowserTest({
    clipboard: true,
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
  }));
}, 120_000);

afterAll(async () => {
  await stopBrowserTest({ browser, server });
  await db?.end();
  const root = new pg.Client({ connectionString: PG_ADMIN_URL });
  await root.connect();
  await root.query(`drop database if exists ${dbName} with (force)`);
  await root.end();
});

afterEach(keepFailures('sql', () => page));

describe('an sql step built in the editor', () => {
  it('writes a webhook’s fields into PostgreSQL through parameters and shows the rows as a table', async () => {
    // The owner account, from the setup code the server printed.
    await page.goto(`${server.url}/#setup-code=${server.setupCode}`);
    await page.getByRole('heading', { name: 'Create the owner account' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();

    // The database's credential, on the Credentials page (no password: the server trusts loopback).
    await addPostgresCredential(page, 'Shop database', dbName);

    // A workflow, and a test event for the field picker to know the fields.
    const order = { id: 7, customer: "Grace O'Neil" };
    const testUrl = await newWorkflowWithTestEvent(page, 'Orders to the database', order);

    // The sql step: the credential, the statement, and its two parameters from the picker.
    const editor = await addSqlStep(
      page,
      'Shop database (PostgreSQL)',
      'insert into orders (id, customer) values ($1, $2)\nreturning id, customer',
    );
    // Highlighted: a keyword in another colour than a name (CodeMirror's styles under the CSP).
    const colourOf = (el: unknown) =>
      (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el)
        .color;
    const colour = (text: string) =>
      editor
        .locator('span', { hasText: new RegExp(`^${text}$`) })
        .first()
        .evaluate(colourOf);
    const plain = await editor.evaluate(colourOf);
    expect(await colour('insert')).not.toBe(plain);

    await pickField(page, '$1', /^body\.id, integer/);
    expect(await page.getByRole('textbox', { name: '$1' }).inputValue()).toBe('{{ body.id }}');
    await page.getByRole('button', { name: '+ Add parameter' }).click();
    await pickField(page, '$2', /^body\.customer, string/);
    expect(await page.getByRole('textbox', { name: '$2' }).inputValue()).toBe('{{ body.customer }}');

    // An expression typed into the statement is refused, naming the field; taken out, it saves.
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(' -- {{ body.id }}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page
      .locator('.field-error', { hasText: 'is literal SQL and may not hold an expression' })
      .waitFor();
    await editor.click();
    await page.keyboard.press('Control+End');
    for (let i = 0; i < ' -- {{ body.id }}'.length; i++) await page.keyboard.press('Backspace');

    // Activate (saves and publishes), then live traffic.
    await page.getByRole('switch', { name: 'Activated' }).click();
    await page
      .getByTestId('publish-state')
      .getByText(/Live · v\d+/)
      .waitFor();
    const live = await fetch(testUrl.replace('/webhook-test/', '/webhook/'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(order),
    });
    expect(live.status).toBe(200);
    const { executionId } = (await live.json()) as { executionId: string };

    // The execution: its rows as a table.
    await page.goto(`${server.url}/executions/${executionId}`);
    await page.getByRole('heading', { name: /Execution\s*Succeeded/ }).waitFor();
    const table = page.getByRole('table', { name: 'Rows of sql' });
    await table.waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(['id', 'customer']);
    expect(await table.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual([
      '7',
      "Grace O'Neil",
    ]);
    await page.getByTestId('sql-rows').getByText('1 row.').waitFor();

    // And in the database, as plain data.
    expect((await db.query('select id, customer from orders')).rows).toEqual([order]);
  }, 120_000);
});
