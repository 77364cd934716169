/**
 * JWT bearer tokens (SPEC 6): `Authorization: Bearer <jwt>`, verified with jose. Only the trigger's
 * algorithm is accepted, so neither `alg: none` nor algorithm confusion (an HS256 token "signed" with
 * an RS256 public key's text as the secret) can pass. `exp`/`nbf` allow 30 s of clock skew and are
 * judged against the request's receive time. The verified claims go to the item as `auth.claims`.
 */
import { createHash } from 'node:crypto';
import { errors, importSPKI, jwtVerify } from 'jose';
import type { AppError } from '../../errors.js';
import type { AuthConfig } from '../../model/workflow.js';
import { header, unauthorized, type Verifier } from './types.js';

type Jwt = Extract<AuthConfig, { type: 'jwt' }>;
type PublicKey = Awaited<ReturnType<typeof importSPKI>>;

const REALM = 'Bearer realm="hookflow webhook"';
const CLOCK_TOLERANCE_SECONDS = 30;

// importSPKI parses ASN.1 and builds a WebCrypto key: too costly per request. Imported keys are
// cached by (algorithm, hash of the PEM), least recently used evicted first (a Map keeps insertion order).
const KEY_CACHE_SIZE = 64;
const keyCache = new Map<string, PublicKey>();

/** A 401 about the trigger's own set-up (found at request time): the request cannot be authenticated. */
function misconfigured(message: string, hint: string): AppError {
  return unauthorized(message, hint, REALM);
}

async function publicKey(algorithm: Jwt['algorithm'], pem: string): Promise<PublicKey> {
  const id = `${algorithm}:${createHash('sha256').update(pem).digest('hex')}`;
  const cached = keyCache.get(id);
  if (cached) {
    keyCache.delete(id); // re-insert: most recently used goes last
    keyCache.set(id, cached);
    return cached;
  }
  const spkiOnly = `Give the public key as SPKI PEM ("-----BEGIN PUBLIC KEY-----") for ${algorithm}; certificates are not accepted (extract the key with \`openssl x509 -pubkey -noout\`).`;
  if (pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw misconfigured("The trigger's JWT public key is a certificate, not an SPKI public key.", spkiOnly);
  }
  let key: PublicKey;
  try {
    key = await importSPKI(pem.trim(), algorithm);
  } catch {
    throw misconfigured(
      `The trigger's JWT public key is not a valid ${algorithm} SPKI public key.`,
      spkiOnly,
    );
  }
  if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value!);
  keyCache.set(id, key);
  return key;
}

async function verificationKey(auth: Jwt): Promise<Uint8Array | PublicKey> {
  if (auth.algorithm === 'HS256') {
    if (!auth.secret)
      throw misconfigured('The trigger uses HS256 but has no JWT secret.', 'Set "secret" on the trigger.');
    return new TextEncoder().encode(auth.secret);
  }
  if (!auth.publicKey) {
    throw misconfigured(
      `The trigger uses ${auth.algorithm} but has no public key.`,
      'Set "publicKey" on the trigger (SPKI PEM).',
    );
  }
  return publicKey(auth.algorithm, auth.publicKey);
}

const CLAIM_REASONS: Record<string, string> = {
  iss: 'The token was issued by another issuer',
  aud: 'The token is meant for another audience',
  nbf: 'The token is not valid yet',
};

/** Why jose refused the token, in words safe to return: no expected values, no key material. */
function reason(err: unknown, algorithm: string): string {
  if (!(err instanceof errors.JOSEError)) return 'The token is malformed';
  switch (err.code) {
    case 'ERR_JWT_EXPIRED':
      return 'The token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return (
        CLAIM_REASONS[(err as errors.JWTClaimValidationFailed).claim] ?? 'A claim in the token is not valid'
      );
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'The token signature is invalid';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return `The token must be signed with ${algorithm}`;
    default:
      return 'The token is malformed';
  }
}

export const verifyJwt: Verifier<Jwt> = async (auth, input) => {
  const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header(input, 'authorization') ?? '');
  if (!match) {
    // RFC 6750 §3.1: no error code when the request carried no token at all.
    throw unauthorized(
      'This webhook needs a bearer token.',
      'Send an Authorization: Bearer <JWT> header signed as the trigger expects.',
      REALM,
    );
  }
  const key = await verificationKey(auth);
  try {
    const { payload } = await jwtVerify(match[1]!, key, {
      algorithms: [auth.algorithm],
      ...(auth.issuer === undefined ? {} : { issuer: auth.issuer }),
      ...(auth.audience === undefined ? {} : { audience: auth.audience }),
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(input.now),
    });
    return { maskedHeaders: ['authorization'], claims: { ...payload } };
  } catch (err) {
    const why = reason(err, auth.algorithm);
    throw unauthorized(
      `${why}.`,
      "Send a fresh token signed with the trigger's key and algorithm, for its issuer and audience.",
      `${REALM}, error="invalid_token", error_description="${why}"`,
    );
  }
};
