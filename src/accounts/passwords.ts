/**
 * Password hashing with scrypt (node:crypto, no native add-on). N=2^15, r=8, p=1 costs ~50–100 ms
 * and 32 MiB per hash on this class of machine: slow for an attacker with a stolen database, fine
 * for a person signing in. Parameters are stored with each hash so they can be raised later.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

const options = (n: number, r: number, p: number): ScryptOptions => ({ N: n, r, p, maxmem: 128 * n * r * 2 });

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LENGTH, options(N, R, P));
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(
    password,
    Buffer.from(salt, 'base64'),
    expected.length,
    options(Number(n), Number(r), Number(p)),
  );
  return timingSafeEqual(key, expected);
}

/** A hash to verify against when the email is unknown, so timing does not reveal which emails exist. */
export const DUMMY_HASH_PROMISE = hashPassword(randomBytes(16).toString('hex'));
