/**
 * HMAC presets (SPEC 6). The signers below are written from each provider's documentation, apart
 * from the code under test, and published example vectors are checked verbatim where they exist
 * (GitHub, Slack, Standard Webhooks). Every preset then goes through the same failure table.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../../src/model/workflow.js';
import { verifyAuth } from '../../../src/webhooks/auth/index.js';
import { nowSeconds, request, unauthorized } from './helpers.js';

type Hmac = Extract<AuthConfig, { type: 'hmac' }>;
type Alg = 'sha1' | 'sha256' | 'sha512';
const mac = (alg: Alg, key: string | Buffer, data: string | Buffer) => createHmac(alg, key).update(data);
const cat = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));

// A JSON body with bytes a string round-trip would change (invalid UTF-8, CRLF, trailing space).
const BODY = cat('{"event":"ping", "n":1}\r\n ', Buffer.from([0xff, 0xfe]));

interface Preset {
  name: Hmac['preset'];
  auth: Hmac;
  /** Headers as the provider would send them for `body` at `seconds`, signed with `secret`. */
  sign: (body: Buffer, secret: string, seconds: number) => Record<string, string>;
  /** Header carrying the signature (masked). */
  signature: string;
  /** Whether a signed timestamp is checked against toleranceSeconds. */
  timestamped: boolean;
  /** Values of the signature header that are not a well-formed signature. */
  malformed: string[];
}

const SW_SECRET = `whsec_${Buffer.from('standard-webhooks test key 32 bytes!').toString('base64')}`;

const presets: Preset[] = [
  {
    name: 'github',
    auth: { type: 'hmac', preset: 'github', secret: 'gh-secret' },
    // docs.github.com: X-Hub-Signature-256 = "sha256=" + hex HMAC-SHA256(secret, payload)
    sign: (body, secret) => ({
      'X-Hub-Signature-256': `sha256=${mac('sha256', secret, body).digest('hex')}`,
    }),
    signature: 'x-hub-signature-256',
    timestamped: false,
    malformed: ['757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17', 'sha256=zz', 'sha1=abcd'],
  },
  {
    name: 'stripe',
    auth: { type: 'hmac', preset: 'stripe', secret: 'whsec_stripe_test_secret' },
    // docs.stripe.com: signed_payload = t + "." + payload; v1 = hex HMAC-SHA256(endpoint secret, signed_payload)
    sign: (body, secret, t) => ({
      'Stripe-Signature': `t=${t},v1=${mac('sha256', secret, cat(`${t}.`, body)).digest('hex')}`,
    }),
    signature: 'stripe-signature',
    timestamped: true,
    malformed: ['v1=abcd', `t=${nowSeconds()}`, `t=${nowSeconds()},v0=abcd`, 't=soon,v1=abcd', 'garbage'],
  },
  {
    name: 'slack',
    auth: { type: 'hmac', preset: 'slack', secret: 'slack-signing-secret' },
    // api.slack.com: "v0=" + hex HMAC-SHA256(signing secret, "v0:" + timestamp + ":" + body)
    sign: (body, secret, ts) => ({
      'X-Slack-Request-Timestamp': String(ts),
      'X-Slack-Signature': `v0=${mac('sha256', secret, cat(`v0:${ts}:`, body)).digest('hex')}`,
    }),
    signature: 'x-slack-signature',
    timestamped: true,
    malformed: ['a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503', 'v1=ab', 'v0=not-hex'],
  },
  {
    name: 'shopify',
    auth: { type: 'hmac', preset: 'shopify', secret: 'shopify-client-secret' },
    // shopify.dev: X-Shopify-Hmac-Sha256 = base64 HMAC-SHA256(client secret, raw body)
    sign: (body, secret) => ({ 'X-Shopify-Hmac-Sha256': mac('sha256', secret, body).digest('base64') }),
    signature: 'x-shopify-hmac-sha256',
    timestamped: false,
    malformed: ['not base64!', 'abc', 'sha256=AAAA'],
  },
  {
    name: 'standard-webhooks',
    auth: { type: 'hmac', preset: 'standard-webhooks', secret: SW_SECRET },
    // standardwebhooks.com: "v1," + base64 HMAC-SHA256(base64decode(secret sans whsec_), id.timestamp.body)
    sign: (body, secret, ts) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      const sig = mac('sha256', key, cat(`msg_123.${ts}.`, body)).digest('base64');
      return { 'webhook-id': 'msg_123', 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` };
    },
    signature: 'webhook-signature',
    timestamped: true,
    malformed: ['v2,AAAA', 'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=', 'v1,***'],
  },
  {
    name: 'custom',
    auth: { type: 'hmac', preset: 'custom', secret: 'custom-secret', header: 'X-Signature' },
    sign: (body, secret) => ({ 'X-Signature': mac('sha256', secret, body).digest('hex') }),
    signature: 'x-signature',
    timestamped: false,
    malformed: ['xyz', 'sha256=abcd'],
  },
];

/** Headers signed for BODY at NOW with the preset's own secret. */
const signed = (p: Preset, overrides: { body?: Buffer; secret?: string; seconds?: number } = {}) =>
  p.sign(overrides.body ?? BODY, overrides.secret ?? p.auth.secret, overrides.seconds ?? nowSeconds());

describe.each(presets)('hmac preset $name', (p) => {
  it('accepts a request signed as the provider documents, masking the signature header', async () => {
    const result = await verifyAuth(p.auth, request(signed(p), BODY));
    expect(result).toEqual({ maskedHeaders: [p.signature] });
  });

  it('refuses a tampered body', async () => {
    const tampered = Buffer.from(BODY);
    tampered.writeUInt8(tampered.readUInt8(2) ^ 1, 2); // flip one bit
    await unauthorized(verifyAuth(p.auth, request(signed(p), tampered)));
  });

  it('refuses a body re-encoded as a string (signatures cover the exact bytes)', async () => {
    await unauthorized(verifyAuth(p.auth, request(signed(p), Buffer.from(BODY.toString('utf8')))));
  });

  it('refuses a signature made with another secret', async () => {
    const other =
      p.name === 'standard-webhooks' ? `whsec_${Buffer.from('another key').toString('base64')}` : 'x';
    const err = await unauthorized(verifyAuth(p.auth, request(signed(p, { secret: other }), BODY)));
    expect(err.message).toMatch(/does not match/);
    expect(err.headers).toBeUndefined(); // no HTTP auth scheme to challenge with (SPEC: basic/bearer only)
  });

  it.each(Object.keys(signed(p)))('refuses a request without the %s header', async (name) => {
    const headers = signed(p);
    delete headers[name];
    const err = await unauthorized(verifyAuth(p.auth, request(headers, BODY)));
    expect(err.message).toContain(name);
  });

  it.each(p.malformed)('refuses a malformed signature header: %s', async (value) => {
    const headers = { ...signed(p) };
    const key = Object.keys(headers).find((k) => k.toLowerCase() === p.signature)!;
    headers[key] = value;
    await unauthorized(verifyAuth(p.auth, request(headers, BODY)));
  });
});

describe.each(presets.filter((p) => p.timestamped))('replay window of $name', (p) => {
  it.each([
    { when: '301 s old', delta: -301, ok: false },
    { when: '301 s in the future', delta: 301, ok: false },
    { when: 'a day old', delta: -86_400, ok: false },
    { when: '299 s old', delta: -299, ok: true },
    { when: '299 s in the future', delta: 299, ok: true },
  ])('default 300 s: a correctly signed request $when is accepted: $ok', async ({ delta, ok }) => {
    const promise = verifyAuth(p.auth, request(signed(p, { seconds: nowSeconds() + delta }), BODY));
    if (ok) await expect(promise).resolves.toBeTruthy();
    else expect((await unauthorized(promise)).message).toMatch(/300 seconds/);
  });

  it('honours toleranceSeconds', async () => {
    const auth = { ...p.auth, toleranceSeconds: 10 };
    await expect(
      verifyAuth(auth, request(signed(p, { seconds: nowSeconds() - 9 }), BODY)),
    ).resolves.toBeTruthy();
    await unauthorized(verifyAuth(auth, request(signed(p, { seconds: nowSeconds() - 11 }), BODY)));
  });
});

describe('published example vectors', () => {
  it('GitHub: the docs example ("It\'s a Secret to Everybody" / "Hello, World!")', async () => {
    const auth: Hmac = { type: 'hmac', preset: 'github', secret: "It's a Secret to Everybody" };
    const headers = {
      'X-Hub-Signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    };
    await expect(verifyAuth(auth, request(headers, 'Hello, World!'))).resolves.toBeTruthy();
    await unauthorized(verifyAuth(auth, request(headers, 'Hello, World?')));
    await unauthorized(
      verifyAuth({ ...auth, secret: "It's a secret to everybody" }, request(headers, 'Hello, World!')),
    );
  });

  // api.slack.com/authentication/verifying-requests-from-slack, the slash-command example.
  const SLACK_BODY =
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
  const slackAuth: Hmac = { type: 'hmac', preset: 'slack', secret: '8f742231b10e8888abcd99yyyzzz85a5' };
  const slackHeaders = {
    'X-Slack-Request-Timestamp': '1531420618',
    'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
  };

  it('Slack: the docs example, received 10 s after it was sent', async () => {
    await expect(verifyAuth(slackAuth, request(slackHeaders, SLACK_BODY, 1531420628_000))).resolves.toEqual({
      maskedHeaders: ['x-slack-signature'],
    });
  });

  it('Slack: the docs example replayed later is refused', async () => {
    await unauthorized(verifyAuth(slackAuth, request(slackHeaders, SLACK_BODY, 1531420618_000 + 301_000)));
  });

  // The Standard Webhooks reference vector (also Svix's documentation example).
  const swAuth: Hmac = {
    type: 'hmac',
    preset: 'standard-webhooks',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  };
  const swHeaders = {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  };
  const swBody = '{"test": 2432232314}';

  it('Standard Webhooks: the reference vector', async () => {
    await expect(verifyAuth(swAuth, request(swHeaders, swBody, 1614265330_000))).resolves.toEqual({
      maskedHeaders: ['webhook-signature'],
    });
  });

  it('Standard Webhooks: the signed id is part of the content', async () => {
    await unauthorized(
      verifyAuth(swAuth, request({ ...swHeaders, 'webhook-id': 'msg_other' }, swBody, 1614265330_000)),
    );
  });
});

describe('several signatures (secret rotation)', () => {
  const stripe = presets.find((p) => p.name === 'stripe')!;
  const t = nowSeconds();
  const good = mac('sha256', stripe.auth.secret, cat(`${t}.`, BODY)).digest('hex');
  const old = mac('sha256', 'old secret', cat(`${t}.`, BODY)).digest('hex');

  it.each([
    ['the second v1 matches', `t=${t},v1=${old},v1=${good}`, true],
    ['a v0 next to the good v1', `t=${t},v1=${good},v0=${old}`, true],
    ['spaces after commas', `t=${t}, v1=${good}`, true],
    ['only v0 carries the right value', `t=${t},v1=${old},v0=${good}`, false],
    ['two timestamps', `t=${t},t=${t - 1},v1=${good}`, false],
  ])('Stripe-Signature with %s', async (_, value, ok) => {
    const promise = verifyAuth(stripe.auth, request({ 'Stripe-Signature': value }, BODY));
    if (ok) await expect(promise).resolves.toBeTruthy();
    else await unauthorized(promise);
  });

  const sw = presets.find((p) => p.name === 'standard-webhooks')!;
  const sig = signed(sw)['webhook-signature']!;
  it.each([
    ['a stale v1 first', `v1,${Buffer.alloc(32).toString('base64')} ${sig}`, true],
    ['an asymmetric v1a entry first', `v1a,${Buffer.alloc(64).toString('base64')} ${sig}`, true],
    ['only unknown versions', sig.replace('v1,', 'v2,'), false],
  ])('webhook-signature with %s', async (_, value, ok) => {
    const promise = verifyAuth(sw.auth, request({ ...signed(sw), 'webhook-signature': value }, BODY));
    if (ok) await expect(promise).resolves.toBeTruthy();
    else await unauthorized(promise);
  });

  it('Standard Webhooks refuses a secret that is not base64', async () => {
    const auth: Hmac = { ...sw.auth, secret: 'whsec_not base64!' };
    expect((await unauthorized(verifyAuth(auth, request(signed(sw), BODY)))).message).toMatch(/not base64/);
  });
});

describe('custom preset options', () => {
  const secret = 'custom-secret';
  it.each<[string, Partial<Hmac>, string]>([
    ['sha256 hex (defaults)', {}, mac('sha256', secret, BODY).digest('hex')],
    ['sha1 hex', { algorithm: 'sha1' }, mac('sha1', secret, BODY).digest('hex')],
    [
      'sha512 base64',
      { algorithm: 'sha512', encoding: 'base64' },
      mac('sha512', secret, BODY).digest('base64'),
    ],
    ['a prefix', { prefix: 'sha256=' }, `sha256=${mac('sha256', secret, BODY).digest('hex')}`],
    ['upper-case hex', {}, mac('sha256', secret, BODY).digest('hex').toUpperCase()],
  ])('accepts %s', async (_, options, value) => {
    const auth: Hmac = { type: 'hmac', preset: 'custom', secret, header: 'X-Sig', ...options };
    await expect(verifyAuth(auth, request({ 'X-Sig': value }, BODY))).resolves.toEqual({
      maskedHeaders: ['x-sig'],
    });
  });

  it.each<[string, Partial<Hmac>, string]>([
    [
      'a sha256 digest for a sha512 trigger',
      { algorithm: 'sha512' },
      mac('sha256', secret, BODY).digest('hex'),
    ],
    ['hex for a base64 trigger', { encoding: 'base64' }, mac('sha256', secret, BODY).digest('hex')],
    ['no prefix when one is required', { prefix: 'sha256=' }, mac('sha256', secret, BODY).digest('hex')],
    ['a truncated digest', {}, mac('sha256', secret, BODY).digest('hex').slice(0, 40)],
  ])('refuses %s', async (_, options, value) => {
    const auth: Hmac = { type: 'hmac', preset: 'custom', secret, header: 'X-Sig', ...options };
    await unauthorized(verifyAuth(auth, request({ 'X-Sig': value }, BODY)));
  });

  it('refuses everything when the trigger names no header', async () => {
    const auth: Hmac = { type: 'hmac', preset: 'custom', secret };
    const err = await unauthorized(verifyAuth(auth, request({ 'X-Signature': 'ab' }, BODY)));
    expect(err.message).toMatch(/no signature header/);
  });
});

it('neither the secret nor a signature appears in an error', async () => {
  for (const p of presets) {
    const other =
      p.name === 'standard-webhooks' ? `whsec_${Buffer.from('wrong').toString('base64')}` : 'wrong';
    const headers = signed(p, { secret: other });
    const err = await verifyAuth(p.auth, request(headers, BODY)).catch((e: Error) => e);
    const text = JSON.stringify(err) + String((err as Error).message);
    expect(text).not.toContain(p.auth.secret);
    for (const v of Object.values(headers)) if (v.length > 20) expect(text).not.toContain(v);
  }
});
