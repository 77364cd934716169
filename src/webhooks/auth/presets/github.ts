/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>`. No timestamp is signed,
 * so there is no replay window (GitHub's X-GitHub-Delivery id is the sender's dedup key).
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
import { decode, digestMatches, hmac, malformed, mismatch, type Preset, requireHeader } from './shared.js';

const NAME = 'X-Hub-Signature-256';
const PREFIX = 'sha256=';

export const github: Preset = (auth, input) => {
  const value = requireHeader(input, NAME, 'GitHub');
  const received = value.startsWith(PREFIX) ? decode(value.slice(PREFIX.length), 'hex') : undefined;
  if (!received) throw malformed(NAME, '"sha256=" followed by 64 hex digits');
  if (!digestMatches(hmac('sha256', auth.secret, input.rawBody), received)) throw mismatch(NAME, 'GitHub');
  return { maskedHeaders: [NAME.toLowerCase()] };
};
