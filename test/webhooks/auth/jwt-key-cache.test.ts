/** importSPKI is costly, so imported public keys are cached per (algorithm, PEM) in a bounded LRU. */
import * as jose from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { verifyAuth } from '../../../src/webhooks/auth/index.js';
import { nowSeconds, request } from './helpers.js';

vi.mock('jose', async (importOriginal) => {
  const actual = await importOriginal<typeof import('jose')>();
  return { ...actual, importSPKI: vi.fn(actual.importSPKI) };
});

async function es256() {
  const { privateKey, publicKey } = await jose.generateKeyPair('ES256');
  const jwt = await new jose.SignJWT({ exp: nowSeconds() + 60 })
    .setProtectedHeader({ alg: 'ES256' })
    .sign(privateKey);
  return { pem: await jose.exportSPKI(publicKey), input: request({ authorization: `Bearer ${jwt}` }, '') };
}

describe('JWT public key cache', () => {
  it('imports a key once, and again only after 64 other keys pushed it out', async () => {
    const spy = vi.mocked(jose.importSPKI);
    const first = await es256();
    const verify = (k: { pem: string; input: ReturnType<typeof request> }) =>
      verifyAuth({ type: 'jwt', algorithm: 'ES256', publicKey: k.pem }, k.input);

    spy.mockClear();
    for (let i = 0; i < 3; i++) await verify(first);
    expect(spy).toHaveBeenCalledTimes(1);

    for (let i = 0; i < 64; i++) await verify(await es256());
    spy.mockClear();
    await verify(first);
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
