import { describe, expect, it } from 'vitest';
import { CREDENTIAL_TYPES, credentialData } from '../../web/src/lib/credentials.js';
import { type Drafts, stepDraftFrom, stepFrom } from '../../web/src/lib/draft.js';

describe('credential forms', () => {
  it('have the fields of each SPEC 7c type', () => {
    expect(Object.fromEntries(CREDENTIAL_TYPES.map((t) => [t.type, t.fields.map((f) => f.key)]))).toEqual({
      bearer: ['token'],
      header: ['name', 'value'],
      basic: ['username', 'password'],
      query: ['name', 'value'],
      postgres: ['host', 'port', 'database', 'username', 'password', 'ssl'],
      mysql: ['host', 'port', 'database', 'username', 'password', 'ssl'],
      smtp: ['host', 'port', 'security', 'username', 'password', 'from'],
      oauth2: ['grantType', 'authorizationUrl', 'tokenUrl', 'clientId', 'clientSecret', 'scope', 'audience'],
    });
  });

  it('smtp: the login may be left out, the security mode defaults to STARTTLS, rotating sends only what was typed', () => {
    expect(
      credentialData('smtp', { host: 'smtp.example.com', port: '587', from: 'a@example.com' }, false),
    ).toEqual({
      data: { host: 'smtp.example.com', port: '587', security: 'starttls', from: 'a@example.com' },
      missing: [],
    });
    expect(credentialData('smtp', { port: '465' }, false).missing).toEqual(['Host', 'From']);
    expect(credentialData('smtp', { password: 'new' }, true)).toEqual({
      data: { password: 'new' },
      missing: [],
    });
  });

  it('oauth2: the grant type defaults to its first choice, and scope, audience, authorization URL may stay blank', () => {
    expect(
      credentialData(
        'oauth2',
        { tokenUrl: 'https://t.example/token', clientId: 'a', clientSecret: 'b' },
        false,
      ),
    ).toEqual({
      data: {
        grantType: 'authorization_code',
        tokenUrl: 'https://t.example/token',
        clientId: 'a',
        clientSecret: 'b',
      },
      missing: [],
    });
    expect(credentialData('oauth2', { clientSecret: 'new' }, true)).toEqual({
      data: { clientSecret: 'new' },
      missing: [],
    });
  });

  it('let a database credential leave port and password blank, and send TLS as its value', () => {
    expect(
      credentialData('postgres', { host: 'db', database: 'shop', username: 'u', ssl: 'no-verify' }, false),
    ).toEqual({ data: { host: 'db', database: 'shop', username: 'u', ssl: 'no-verify' }, missing: [] });
    // Creating, TLS is off unless picked; rotating, an untouched choice is kept as stored.
    expect(credentialData('mysql', { host: 'db' }, false)).toEqual({
      data: { host: 'db', ssl: false },
      missing: ['Database', 'Username'],
    });
    expect(credentialData('mysql', { ssl: 'true' }, true)).toEqual({ data: { ssl: true }, missing: [] });
    expect(credentialData('mysql', { password: 'new' }, true)).toEqual({
      data: { password: 'new' },
      missing: [],
    });
  });

  it('write an sql step back as it was read, and refuse an expression in its statement', () => {
    const step = {
      name: 'q',
      type: 'sql',
      credential: 'c1',
      query: 'select * from orders where id = $1',
      params: ['{{ body.id }}', 'plain'],
      maxRows: 10,
      timeoutMs: 500,
    };
    const d = stepDraftFrom(step) as Drafts['sql'];
    expect(d.sql).toBe(step.query);
    expect(stepFrom(d, 0, [])).toEqual(step);
    // A stored number or null comes back as the same value, through an expression.
    expect(stepFrom(stepDraftFrom({ ...step, params: [7, null] }), 0, []).params).toEqual([
      '{{ 7 }}',
      '{{ null }}',
    ]);
    const problems: { field: string; message: string }[] = [];
    stepFrom({ ...d, sql: "select '{{ body.id }}'" }, 2, problems);
    expect(problems.map((p) => p.field)).toEqual(['/steps/2/query']);
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
    const d = stepDraftFrom(step) as Drafts['http'];
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
    const d = stepDraftFrom(http) as Drafts['http'];
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
