/**
 * Webhook authentication: one verifier per auth kind (SPEC 6), looked up by `auth.type`.
 * A verifier throws AppError('unauthorized') or returns what the item should know: which
 * header(s) carried the credential (stored as "***") and, for JWT, the verified claims.
 */
import type { AuthConfig } from '../../model/workflow.js';
import type { MaybePromise } from '../../shared/maybe-promise.js';
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

/**
 * The verifier's own answer: none, basic, header and HMAC answer at once, which spares the webhook
 * pipeline an await; JWT with a promise (its key lookups). A refusal is thrown by the first and a
 * rejection of the second (receive.ts awaits inside one async function: both reach it the same way).
 */
export function authenticate(auth: AuthConfig, input: AuthInput): MaybePromise<AuthResult> {
  const verify = verifiers[auth.type] as Verifier<AuthConfig> | undefined;
  if (!verify) throw new Error(`No verifier for webhook auth type "${auth.type}"`);
  return verify(auth, input);
}

/** authenticate, always as a promise: a refusal is a rejection. */
export async function verifyAuth(auth: AuthConfig, input: AuthInput): Promise<AuthResult> {
  return authenticate(auth, input);
}
