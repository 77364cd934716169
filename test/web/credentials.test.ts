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
    expect(credentialData('basic', { password: 'new' }, true)).toEqual({ data: { password: 'new' }, missing: [] });
  });

  it('keep an http step credential by id, and send none when cleared', () => {
    const step = { name: 'h', type: 'http', method: 'GET', url: 'https://x.example', credential: 'c1' };
    const d = stepDraftFrom(step);
    expect(d.credential).toBe('c1');
    expect(stepFrom(d, 0, [])).toEqual(step);
    expect(stepFrom({ ...d, credential: '' }, 0, [])).not.toHaveProperty('credential');
  });
});
