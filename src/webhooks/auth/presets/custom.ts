/**
 * Custom: `<header>: [prefix]<hex|base64 HMAC-<algorithm>(secret, raw body)>` with defaults
 * sha256 / hex / no prefix. Nothing time-related is signed, so there is no replay window.
 */
import { unauthorized } from '../types.js';
import { decode, digestMatches, hmac, malformed, mismatch, type Preset, requireHeader } from './shared.js';

export const custom: Preset = (auth, input) => {
  if (!auth.header) {
    // The schema leaves `header` optional (other presets have fixed headers); a custom trigger needs one.
    throw unauthorized(
      'This webhook has no signature header configured.',
      'Set "header" on the trigger\'s hmac auth, e.g. "X-Signature".',
    );
  }
  const { header: name, algorithm = 'sha256', encoding = 'hex', prefix = '' } = auth;
  const value = requireHeader(input, name, 'the sender');
  const received = value.startsWith(prefix) ? decode(value.slice(prefix.length), encoding) : undefined;
  if (!received)
    throw malformed(name, `${prefix ? `"${prefix}" followed by ` : ''}a ${encoding} ${algorithm} HMAC`);
  if (!digestMatches(hmac(algorithm, auth.secret, input.rawBody), received))
    throw mismatch(name, 'the sender');
  return { maskedHeaders: [name.toLowerCase()] };
};
