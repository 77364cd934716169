/**
 * A ready-to-paste `curl` line for a webhook URL that matches the trigger's settings: the sample
 * form body `param1=a&param2=b` for methods with a body, the same data as a query string for GET
 * and HEAD, and the credential the trigger's auth expects (secrets are never sent to the browser,
 * so a saved secret shows as a placeholder to replace).
 */
import type { AuthConfig, Method } from '../types';

export const SAMPLE = 'param1=a&param2=b';
const MASK = '***';

/** Single-quote for POSIX shells. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The method the curl line uses: POST when the trigger takes it (the common case), else the first. */
export function primaryMethod(methods: readonly Method[]): Method {
  return methods.includes('POST') ? 'POST' : (methods[0] ?? 'POST');
}

/** `:id` segments need a value to be callable. */
export function fillParams(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? `example-${segment.slice(1)}` : segment))
    .join('/');
}

function secret(value: string | undefined, placeholder: string): string {
  return !value || value === MASK ? placeholder : value;
}

const HMAC_HEADERS: Record<string, string> = {
  github: 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  stripe: 'Stripe-Signature: t=<unix time>,v1=<signature>',
  slack: 'X-Slack-Signature: v0=<signature>',
  shopify: 'X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>',
  'standard-webhooks': 'webhook-signature: v1,<signature>',
};

function authArgs(auth: AuthConfig): string[] {
  switch (auth.type) {
    case 'basic':
      return ['-u', shellQuote(`${auth.username || '<username>'}:${secret(auth.password, '<password>')}`)];
    case 'header':
      return ['-H', shellQuote(`${auth.name || 'Authorization'}: ${secret(auth.value, '<header value>')}`)];
    case 'jwt':
      return ['-H', shellQuote('Authorization: Bearer <JWT>')];
    case 'hmac': {
      const preset = auth.preset ?? '';
      // Own keys only: a preset named "constructor" or "toString" is just an unknown one.
      const header =
        preset === 'custom'
          ? `${auth.header || 'X-Signature'}: ${auth.prefix ?? ''}<signature>`
          : Object.hasOwn(HMAC_HEADERS, preset)
            ? HMAC_HEADERS[preset]!
            : 'X-Signature: <signature>';
      return ['-H', shellQuote(header)];
    }
    default:
      return [];
  }
}

export function curlLine(url: string, method: Method, auth: AuthConfig): string {
  const args = ['curl'];
  if (method === 'GET' || method === 'HEAD') {
    if (method === 'HEAD') args.push('-I');
    args.push(...authArgs(auth), shellQuote(`${url}?${SAMPLE}`));
  } else {
    args.push('-X', method, ...authArgs(auth), shellQuote(url), '-d', shellQuote(SAMPLE));
  }
  return args.join(' ');
}
