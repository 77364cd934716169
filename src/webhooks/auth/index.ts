/**
 * Webhook authentication: one verifier per auth kind (SPEC 6), looked up by `auth.type`.
 * A verifier throws AppError('unauthorized') or returns what the item should know: which
 * header(s) carried the credential (stored as "***") and, for JWT, the verified claims.
 */
import type { AuthConfig } from '../../model/workflow.js';
import { verifyBasic } from './basic.js';
import { verifyHeader } from './header.js';
import { verifyHmac } from './hmac.js';
import { verifyJwt } from './jwt.js';
import type { AuthInput, AuthResult, Verifier } from './types.js';

export type { AuthInput, AuthResult } from './types.js';

const verifiers: { [K in AuthConfig['type']]?: Verifier<Extract<AuthConfig, { type: K }>> } = {
  none: () => ({ maskedHeaders: [] }),
  basic: verifyBasic,
  header: verifyHeader,
  jwt: verifyJwt,
  hmac: verifyHmac,
};

export async function verifyAuth(auth: AuthConfig, input: AuthInput): Promise<AuthResult> {
  return verifyAuthNow(auth, input);
}

/**
 * verifyAuth for the webhook hot path: the verifier's own answer, a promise only when it needs one
 * (JWT key lookups); none, basic, header and HMAC answer at once, which spares the request an
 * await. Throws (synchronously, for those) what verifyAuth rejects with.
 */
export function verifyAuthNow(auth: AuthConfig, input: AuthInput): AuthResult | Promise<AuthResult> {
  const verify = verifiers[auth.type] as Verifier<AuthConfig> | undefined;
  if (!verify) throw new Error(`No verifier for webhook auth type "${auth.type}"`);
  return verify(auth, input);
}
