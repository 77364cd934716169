import type { AuthConfig } from '../../model/workflow.js';
import { header, safeEqual, unauthorized, type Verifier } from './types.js';

type Basic = Extract<AuthConfig, { type: 'basic' }>;

const CHALLENGE = 'Basic realm="hookflow webhook", charset="UTF-8"';

export const verifyBasic: Verifier<Basic> = (auth, input) => {
  const value = header(input, 'authorization');
  const match = value ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value) : null;
  if (!match) {
    throw unauthorized(
      'This webhook needs HTTP Basic credentials.',
      'Send an Authorization: Basic header with the username and password set on the trigger.',
      CHALLENGE,
    );
  }
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  const pass = colon === -1 ? '' : decoded.slice(colon + 1);
  // Both comparisons always run, so timing does not reveal which part was wrong.
  const ok = [safeEqual(user, auth.username), safeEqual(pass, auth.password)].every(Boolean);
  if (!ok) {
    throw unauthorized(
      'The username or password is wrong.',
      'Check the credentials set on the trigger.',
      CHALLENGE,
    );
  }
  return { maskedHeaders: ['authorization'] };
};
