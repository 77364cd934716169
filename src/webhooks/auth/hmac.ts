/**
 * HMAC-signed webhooks (SPEC 6): one preset per provider in ./presets, looked up by `auth.preset`.
 * The Record is exhaustive over the schema's presets, so adding one there without a verifier here
 * does not compile.
 */
import { custom } from './presets/custom.js';
import { github } from './presets/github.js';
import type { HmacAuth, Preset } from './presets/shared.js';
import { shopify } from './presets/shopify.js';
import { slack } from './presets/slack.js';
import { standardWebhooks } from './presets/standard-webhooks.js';
import { stripe } from './presets/stripe.js';
import type { Verifier } from './types.js';

const presets: Record<HmacAuth['preset'], Preset> = {
  github,
  stripe,
  slack,
  shopify,
  'standard-webhooks': standardWebhooks,
  custom,
};

export const verifyHmac: Verifier<HmacAuth> = (auth, input) => presets[auth.preset](auth, input);
