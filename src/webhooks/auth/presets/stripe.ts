/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]` where
 * v1 = hex HMAC-SHA256(secret, "<t>.<raw body>"), keyed with the secret exactly as shown ("whsec_…"
 * included; unlike Standard Webhooks it is not base64-decoded). Several v1 are sent while a secret is
 * rolled, any may match; v0 (legacy test-mode scheme) is ignored, as Stripe's libraries do.
 * https://docs.stripe.com/webhooks#verify-manually
 */
import { decode, isUnixSeconds, malformed, type Preset, requireHeader, verifyTimestamped } from './shared.js';

const NAME = 'Stripe-Signature';

export const stripe: Preset = (auth, input) => {
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const part of requireHeader(input, NAME, 'Stripe').split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamps.push(value);
    else if (key === 'v1') signatures.push(value);
  }
  // Exactly one t: with two, which one was signed would be ambiguous.
  const t = timestamps.length === 1 ? timestamps[0]! : '';
  if (!isUnixSeconds(t) || signatures.length === 0)
    throw malformed(NAME, '"t=<unix seconds>,v1=<hex signature>"');
  verifyTimestamped(auth, input, {
    key: auth.secret,
    prefix: `${t}.`,
    candidates: signatures.map((s) => decode(s, 'hex')),
    timestamp: t,
    signatureHeader: NAME,
    timestampHeader: `${NAME} t=`,
    provider: 'Stripe',
  });
  return { maskedHeaders: [NAME.toLowerCase()] };
};
