import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, ERROR_STATUS, type ErrorCode } from '../src/errors.js';

const doc = fs.readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

/** `## code` sections of docs/errors.md with their documented status. */
const documented = new Map(
  [...doc.matchAll(/^## (\w+)\n\*\*Status:\*\* (\d{3})\./gm)].map((m) => [m[1]!, Number(m[2])]),
);

describe('error codes', () => {
  it('docs/errors.md has exactly one section per code, with the same status', () => {
    expect(Object.fromEntries(documented)).toEqual(ERROR_STATUS);
  });

  it.each(Object.keys(ERROR_STATUS) as ErrorCode[])('%s documents a meaning and what to do', (code) => {
    const section = doc.split(/^## /m).find((s) => s.startsWith(`${code}\n`));
    expect(section).toMatch(/\*\*Meaning:\*\* \S/);
    expect(section).toMatch(/\*\*What to do:\*\* \S/);
  });

  it('serialises to the SPEC wire shape', () => {
    const err = new AppError('method_not_allowed', 'No.', { hint: 'Use POST.', headers: { allow: 'POST' } });
    expect(err.status).toBe(405);
    expect(JSON.parse(JSON.stringify(err))).toEqual({
      code: 'method_not_allowed',
      message: 'No.',
      hint: 'Use POST.',
    });
  });
});
