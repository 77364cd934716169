/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:<ts>:<raw body>")>` with the
 * timestamp in `X-Slack-Request-Timestamp`; Slack asks to refuse requests older than five minutes.
 * https://api.slack.com/authentication/verifying-requests-from-slack
 */
import { decode, isUnixSeconds, malformed, type Preset, requireHeader, verifyTimestamped } from './shared.js';

const SIGNATURE = 'X-Slack-Signature';
const TIMESTAMP = 'X-Slack-Request-Timestamp';
const PREFIX = 'v0=';

export const slack: Preset = (auth, input) => {
  const value = requireHeader(input, SIGNATURE, 'Slack');
  const ts = requireHeader(input, TIMESTAMP, 'Slack');
  if (!isUnixSeconds(ts)) throw malformed(TIMESTAMP, 'Unix time in seconds');
  const received = value.startsWith(PREFIX) ? decode(value.slice(PREFIX.length), 'hex') : undefined;
  if (!received) throw malformed(SIGNATURE, '"v0=" followed by 64 hex digits');
  verifyTimestamped(auth, input, {
    key: auth.secret,
    prefix: `v0:${ts}:`,
    candidates: [received],
    timestamp: ts,
    signatureHeader: SIGNATURE,
    timestampHeader: TIMESTAMP,
    provider: 'Slack',
  });
  return { maskedHeaders: [SIGNATURE.toLowerCase()] };
};
