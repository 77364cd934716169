/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(app client secret, raw body)>`. Nothing
 * time-related is signed, so there is no replay window.
 * https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook
 */
import { decode, digestMatches, hmac, malformed, mismatch, type Preset, requireHeader } from './shared.js';

const NAME = 'X-Shopify-Hmac-Sha256';

export const shopify: Preset = (auth, input) => {
  const received = decode(requireHeader(input, NAME, 'Shopify'), 'base64');
  if (!received) throw malformed(NAME, 'a base64 HMAC-SHA256 digest');
  if (!digestMatches(hmac('sha256', auth.secret, input.rawBody), received)) throw mismatch(NAME, 'Shopify');
  return { maskedHeaders: [NAME.toLowerCase()] };
};
