/**
 * Standard Webhooks (also what Svix sends): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64> [v1,<base64> …]` (space-separated; any v1 may match, other versions
 * such as v1a — asymmetric — are skipped). v1 = base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")
 * where key = base64-decode(secret without its "whsec_" prefix), as the reference libraries do.
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
import { unauthorized } from '../types.js';
import { decode, isUnixSeconds, malformed, type Preset, requireHeader, verifyTimestamped } from './shared.js';

const ID = 'webhook-id';
const TIMESTAMP = 'webhook-timestamp';
const SIGNATURE = 'webhook-signature';
const PROVIDER = 'Standard Webhooks';

export const standardWebhooks: Preset = (auth, input) => {
  const id = requireHeader(input, ID, PROVIDER);
  const ts = requireHeader(input, TIMESTAMP, PROVIDER);
  const list = requireHeader(input, SIGNATURE, PROVIDER);
  if (!isUnixSeconds(ts)) throw malformed(TIMESTAMP, 'Unix time in seconds');
  const candidates = list
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => decode(entry.slice(3), 'base64'));
  if (candidates.length === 0)
    throw malformed(SIGNATURE, 'a space-separated list of "v1,<base64 signature>"');

  const key = decode(auth.secret.startsWith('whsec_') ? auth.secret.slice(6) : auth.secret, 'base64');
  if (!key) {
    // The trigger is set up wrongly; still a 401 (the request cannot be authenticated, nothing runs).
    throw unauthorized(
      "The trigger's Standard Webhooks secret is not base64.",
      'Paste the signing secret exactly as the sender shows it, usually "whsec_" followed by base64.',
    );
  }
  verifyTimestamped(auth, input, {
    key,
    prefix: `${id}.${ts}.`,
    candidates,
    timestamp: ts,
    signatureHeader: SIGNATURE,
    timestampHeader: TIMESTAMP,
    provider: PROVIDER,
  });
  return { maskedHeaders: [SIGNATURE] };
};
