/**
 * Steps of a browser test in the workflow editor that several tests take the same way: a
 * PostgreSQL credential made on the Credentials page, a new workflow with a captured test event
 * (for the field picker to know its fields), an sql step, a field picked into a value.
 */
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** A `postgres` credential for `database` on the machine's server (trusting loopback: no password). */
export async function addPostgresCredential(page: Page, name: string, database: string): Promise<void> {
  await page.getByRole('link', { name: 'Credentials' }).first().click();
  await page.getByRole('heading', { name: 'Credentials', exact: true }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Type').selectOption('postgres');
  await page.getByLabel('Host').fill('127.0.0.1');
  await page.getByLabel('Port').fill('5432');
  await page.getByLabel('Database').fill(database);
  await page.getByLabel('Username').fill('postgres');
  expect(await page.getByLabel('TLS').inputValue()).toBe('false');
  await page.getByRole('button', { name: 'Create credential' }).click();
  await page.getByText(`Created "${name}". Choose it in an SQL query step`).waitFor();
  await page.getByRole('rowheader', { name: new RegExp(name) }).waitFor();
}

/**
 * A new workflow named `name`, open in the editor, whose test URL (copied with its Copy button:
 * the page needs clipboard permissions) took `body` as JSON while listening. Its test URL.
 */
export async function newWorkflowWithTestEvent(page: Page, name: string, body: unknown): Promise<string> {
  await page.getByRole('link', { name: 'Workflows' }).first().click();
  await page.getByRole('button', { name: 'New workflow' }).click();
  await page.getByLabel('Name of the new workflow').fill(name);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByLabel('Workflow name').waitFor();
  await page.getByRole('button', { name: 'Copy the test URL' }).click();
  await page.getByRole('button', { name: 'Copy the test URL' }).getByText('Copied').waitFor();
  const testUrl = await page.evaluate<string>('navigator.clipboard.readText()');
  await page.getByRole('button', { name: 'Listen for test event' }).click();
  await page.getByText('Waiting for a request on the test URL…').waitFor();
  const captured = await fetch(testUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(captured.status).toBe(200);
  await page.getByRole('table', { name: 'Fields of the captured request' }).waitFor();
  return testUrl;
}

/** An `sql` step added to the open workflow, on `credential` (its label in the picker), `query` typed in. Its code editor. */
export async function addSqlStep(page: Page, credential: string, query: string): Promise<Locator> {
  await page.getByRole('button', { name: '+ SQL query' }).click();
  await page.getByLabel('Credential').selectOption({ label: credential });
  const editor = page.locator('[data-field$="/query"][contenteditable="true"]');
  await editor.waitFor();
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(query);
  return editor;
}

/** `option` (the field's accessible name: `body.id, integer…`) inserted into `target` with the field picker. */
export async function pickField(page: Page, target: string, option: RegExp): Promise<void> {
  await page.getByRole('button', { name: `Insert field into ${target}` }).click();
  await page.getByRole('button', { name: option }).click();
}
