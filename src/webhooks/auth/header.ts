import type { AuthConfig } from '../../model/workflow.js';
import { header, safeEqual, unauthorized, type Verifier } from './types.js';

type HeaderAuth = Extract<AuthConfig, { type: 'header' }>;

export const verifyHeader: Verifier<HeaderAuth> = (auth, input) => {
  const name = auth.name.toLowerCase();
  const value = header(input, name);
  const bearer = name === 'authorization' && /^bearer\s/i.test(auth.value);
  const challenge = bearer ? 'Bearer realm="hookflow webhook"' : undefined;
  if (value === undefined) {
    throw unauthorized(
      `This webhook needs the ${auth.name} header.`,
      `Send the ${auth.name} header with the value set on the trigger.`,
      challenge,
    );
  }
  if (!safeEqual(value, auth.value)) {
    throw unauthorized(
      `The ${auth.name} header has the wrong value.`,
      'Check the value set on the trigger.',
      challenge,
    );
  }
  return { maskedHeaders: [name] };
};
