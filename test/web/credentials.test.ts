import { describe, expect, it } from 'vitest';
import { CREDENTIAL_TYPES, credentialData } from '../../web/src/lib/credentials.js';
import { stepDraftFrom, stepFrom } from '../../web/src/lib/draft.js';

describe('credential forms', () => {
  it('have the fields of each SPEC 7c type', () => {
    expect(Object.fromEntries(CREDENTIAL_TYPES.map((t) => [t.type, t.fields.map((f) => f.key)]))).toEqual({
      bearer: ['token'],
      header: ['name', 'value'],
      basic: ['username', 'password'],
      query: ['name', 'value'],
    });
  });

  it('need every field to create one, and send only typed fields to rotate one', () => {
    expect(credentialData('header', { name: 'X-Key', value: '' }, false)).toEqual({
      data: { name: 'X-Key' },
      missing: ['Header value'],
    });
    expect(credentialData('basic', { username: 'u', password: 'p' }, false)).toEqual({
      data: { username: 'u', password: 'p' },
      missing: [],
    });
    expect(credentialData('basic', { password: 'new' }, true)).toEqual({
      data: { password: 'new' },
      missing: [],
    });
  });

  it('keep an http step credential by id, and send none when cleared', () => {
    const step = { name: 'h', type: 'http', method: 'GET', url: 'https://x.example', credential: 'c1' };
    const d = stepDraftFrom(step);
    expect(d.credential).toBe('c1');
    expect(stepFrom(d, 0, [])).toEqual(step);
    expect(stepFrom({ ...d, credential: '' }, 0, [])).not.toHaveProperty('credential');
  });
});

describe('http retry form', () => {
  const http = { name: 'h', type: 'http', method: 'POST', url: 'https://x.example' };

  it('gives back a stored retry as written, with or without `on`', () => {
    for (const retry of [
      { attempts: 3 },
      { attempts: 5, backoffMs: 200, on: ['5xx'] },
      { attempts: 2, on: ['network', '429', '5xx'] },
    ]) {
      const problems: never[] = [];
      expect(stepFrom(stepDraftFrom({ ...http, retry }), 0, problems)).toEqual({ ...http, retry });
      expect(problems).toEqual([]);
    }
  });

  it('sends none when attempts is blank, `on` only when narrowed, and checks the numbers', () => {
    const d = stepDraftFrom(http);
    expect(stepFrom(d, 0, [])).not.toHaveProperty('retry');
    expect(stepFrom({ ...d, retryAttempts: '4' }, 0, [])).toMatchObject({ retry: { attempts: 4 } });
    expect(stepFrom({ ...d, retryAttempts: '4', retryOn: ['429'], retryOnSet: true }, 0, []).retry).toEqual({
      attempts: 4,
      on: ['429'],
    });
    const problems: { field: string; message: string }[] = [];
    stepFrom({ ...d, retryAttempts: '51', retryBackoffMs: 'soon' }, 2, problems);
    expect(problems.map((p) => p.field)).toEqual(['/steps/2/retry/attempts', '/steps/2/retry/backoffMs']);
  });
});
