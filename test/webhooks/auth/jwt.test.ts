/**
 * JWT bearer auth (SPEC 6). Keys are generated with jose and published as SPKI PEM, as a sender would
 * hand them over; tokens are built with jose's SignJWT. Time is the request's receive time (NOW).
 */
import { type CryptoKey, exportSPKI, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyAuth } from '../../../src/webhooks/auth/index.js';
import type { AuthConfig } from '../../../src/model/workflow.js';
import { nowSeconds, request, unauthorized } from './helpers.js';

type Jwt = Extract<AuthConfig, { type: 'jwt' }>;
type Alg = Jwt['algorithm'];
type SigningKey = Uint8Array | CryptoKey;

const T = nowSeconds();
const CHALLENGE = 'Bearer realm="hookflow webhook"';
const HS_SECRET = 'hs256-shared-secret-of-at-least-32-bytes';
const keys = {} as Record<Alg, { sign: SigningKey; pem: string }>;
let otherRsa: CryptoKey;

beforeAll(async () => {
  for (const alg of ['RS256', 'ES256'] as const) {
    const pair = await generateKeyPair(alg);
    keys[alg] = { sign: pair.privateKey, pem: await exportSPKI(pair.publicKey) };
  }
  keys.HS256 = { sign: new TextEncoder().encode(HS_SECRET), pem: '' };
  otherRsa = (await generateKeyPair('RS256')).privateKey;
});

const trigger = (alg: Alg, extra: Partial<Jwt> = {}): Jwt =>
  alg === 'HS256'
    ? { type: 'jwt', algorithm: alg, secret: HS_SECRET, ...extra }
    : { type: 'jwt', algorithm: alg, publicKey: keys[alg].pem, ...extra };

/** A token valid at T for 5 minutes; `claims` override or add claims (exp/nbf as epoch seconds). */
function token(alg: string, key: SigningKey, claims: JWTPayload = {}): Promise<string> {
  return new SignJWT({
    sub: 'user-1',
    iss: 'https://issuer.example',
    aud: 'hookflow',
    iat: T,
    exp: T + 300,
    ...claims,
  })
    .setProtectedHeader({ alg })
    .sign(key);
}

const bearer = (jwt: string) => request({ Authorization: `Bearer ${jwt}` }, '{}');

describe.each(['HS256', 'RS256', 'ES256'] as const)('%s', (alg) => {
  it('accepts a valid token and returns its claims, masking Authorization', async () => {
    const result = await verifyAuth(
      trigger(alg),
      bearer(await token(alg, keys[alg].sign, { role: 'admin' })),
    );
    expect(result.maskedHeaders).toEqual(['authorization']);
    expect(result.claims).toMatchObject({ sub: 'user-1', role: 'admin', exp: T + 300 });
  });

  it('checks issuer and audience when the trigger sets them', async () => {
    const auth = trigger(alg, { issuer: 'https://issuer.example', audience: 'hookflow' });
    await expect(verifyAuth(auth, bearer(await token(alg, keys[alg].sign)))).resolves.toBeTruthy();
  });

  it.each<[string, JWTPayload, Partial<Jwt>, RegExp]>([
    ['expired beyond the 30 s tolerance', { exp: T - 31 }, {}, /expired/],
    ['not valid for another minute', { nbf: T + 60 }, {}, /not valid yet/],
    ['from another issuer', { iss: 'https://evil.example' }, { issuer: 'https://issuer.example' }, /issuer/],
    ['for another audience', { aud: 'someone-else' }, { audience: 'hookflow' }, /audience/],
    ['without the audience the trigger requires', { aud: undefined }, { audience: 'hookflow' }, /audience/],
  ])('refuses a token %s', async (_, claims, extra, why) => {
    const err = await unauthorized(
      verifyAuth(trigger(alg, extra), bearer(await token(alg, keys[alg].sign, claims))),
    );
    expect(err.message).toMatch(why);
    expect(err.headers?.['www-authenticate']).toMatch(
      /^Bearer realm="hookflow webhook", error="invalid_token"/,
    );
  });

  it.each([
    ['exp 29 s ago', { exp: T - 29 }],
    ['nbf 29 s ahead', { nbf: T + 29 }],
  ])('tolerates clock skew: %s', async (_, claims) => {
    await expect(
      verifyAuth(trigger(alg), bearer(await token(alg, keys[alg].sign, claims))),
    ).resolves.toBeTruthy();
  });

  it('refuses a token whose payload was altered', async () => {
    const [h, , s] = (await token(alg, keys[alg].sign)).split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'admin', exp: T + 300 })).toString('base64url');
    const err = await unauthorized(verifyAuth(trigger(alg), bearer(`${h}.${forged}.${s}`)));
    expect(err.message).toMatch(/signature/);
  });
});

describe('refused tokens', () => {
  it.each<[string, () => Promise<string>, Alg, RegExp]>([
    [
      'HS256 signed with another secret',
      () => token('HS256', new TextEncoder().encode('x'.repeat(40))),
      'HS256',
      /signature/,
    ],
    ['RS256 signed by another key', () => token('RS256', otherRsa), 'RS256', /signature/],
    // Algorithm confusion: the public key's PEM text used as an HMAC secret must not verify.
    [
      'HS256 keyed with the RS256 public key text',
      () => token('HS256', new TextEncoder().encode(keys.RS256.pem)),
      'RS256',
      /must be signed with RS256/,
    ],
    [
      'ES256 for an RS256 trigger',
      () => token('ES256', keys.ES256.sign),
      'RS256',
      /must be signed with RS256/,
    ],
    [
      'RS256 for an HS256 trigger',
      () => token('RS256', keys.RS256.sign),
      'HS256',
      /must be signed with HS256/,
    ],
    [
      'unsecured (alg "none")',
      async () => new UnsecuredJWT({ sub: 'admin', exp: T + 300 }).encode(),
      'HS256',
      /must be signed with HS256/,
    ],
    ['garbage', async () => 'not-a-jwt', 'HS256', /malformed/],
    ['three garbage segments', async () => 'a.b.c', 'RS256', /malformed/],
  ])('%s', async (_, make, alg, why) => {
    const err = await unauthorized(verifyAuth(trigger(alg), bearer(await make())));
    expect(err.message).toMatch(why);
    expect(err.headers?.['www-authenticate']).toContain('error="invalid_token"');
    expect(JSON.stringify(err) + err.message + err.hint).not.toContain(HS_SECRET);
  });

  it.each<[string, Record<string, string>]>([
    ['no Authorization header', {}],
    ['a Basic credential', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['"Bearer" without a token', { Authorization: 'Bearer ' }],
  ])('asks for a bearer token when there is %s', async (_, headers) => {
    const err = await unauthorized(verifyAuth(trigger('HS256'), request(headers, '{}')));
    expect(err.headers).toEqual({ 'www-authenticate': CHALLENGE }); // RFC 6750 3.1: no error code
  });

  it('accepts the scheme name in any case', async () => {
    const jwt = await token('HS256', keys.HS256.sign);
    await expect(
      verifyAuth(trigger('HS256'), request({ Authorization: `bearer ${jwt}` }, '{}')),
    ).resolves.toBeTruthy();
  });
});

describe('trigger key set-up', () => {
  const CERT = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUDkR1\n-----END CERTIFICATE-----\n';

  it.each<[string, () => Jwt, RegExp]>([
    [
      'a certificate instead of an SPKI key',
      () => ({ type: 'jwt', algorithm: 'RS256', publicKey: CERT }),
      /certificate/,
    ],
    [
      'text that is not a key',
      () => ({ type: 'jwt', algorithm: 'RS256', publicKey: 'hello' }),
      /not a valid RS256 SPKI/,
    ],
    [
      'an EC key for RS256',
      () => ({ type: 'jwt', algorithm: 'RS256', publicKey: keys.ES256.pem }),
      /not a valid RS256/,
    ],
    ['no public key', () => ({ type: 'jwt', algorithm: 'ES256' }), /no public key/],
    ['no secret for HS256', () => ({ type: 'jwt', algorithm: 'HS256' }), /no JWT secret/],
  ])('refuses every request when the trigger has %s', async (_, auth, why) => {
    const err = await unauthorized(verifyAuth(auth(), bearer(await token('RS256', keys.RS256.sign))));
    expect(err.message).toMatch(why);
  });

  it('says SPKI only, and how to get one from a certificate', async () => {
    const auth: Jwt = { type: 'jwt', algorithm: 'RS256', publicKey: CERT };
    const err = await unauthorized(verifyAuth(auth, bearer(await token('RS256', keys.RS256.sign))));
    expect(err.hint).toMatch(/BEGIN PUBLIC KEY.*certificates are not accepted/);
  });
});
