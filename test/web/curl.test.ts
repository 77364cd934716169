import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { curlLine, fillParams, primaryMethod, SAMPLE, shellQuote } from '../../web/src/lib/curl.js';
import type { AuthConfig, Method } from '../../web/src/types.js';

/** The words a POSIX shell makes of `line`, as the program it runs would receive them. */
function shellWords(line: string): string[] {
  const out = execFileSync('sh', ['-c', `set -- ${line}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('shellQuote', () => {
  it('wraps text in single quotes', () => {
    expect(shellQuote('hello world')).toBe("'hello world'");
    expect(shellQuote('')).toBe("''");
  });

  it('closes, escapes and reopens around a single quote', () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote("''")).toBe("''\\'''\\'''");
  });

  it('leaves $, backticks, backslashes, double quotes and newlines literal inside the quotes', () => {
    expect(shellQuote('$HOME `id` \\n "x"\n')).toBe('\'$HOME `id` \\n "x"\n\'');
  });

  it('gives back exactly the original text when a shell reads it', () => {
    expect(shellWords(shellQuote('a\'b $HOME `id` \\ "c" ; rm -rf / *'))).toEqual([
      'a\'b $HOME `id` \\ "c" ; rm -rf / *',
    ]);
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 30 }).filter((s) => !s.includes('\0')),
        (text) => {
          expect(shellWords(shellQuote(text))).toEqual([text]);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('primaryMethod', () => {
  it('prefers POST when the trigger takes it, wherever it is in the list', () => {
    expect(primaryMethod(['GET', 'PUT', 'POST'])).toBe('POST');
    expect(primaryMethod(['POST'])).toBe('POST');
  });

  it('takes the first method otherwise', () => {
    expect(primaryMethod(['PUT', 'GET'])).toBe('PUT');
    expect(primaryMethod(['HEAD'])).toBe('HEAD');
  });

  it('falls back to POST when there are no methods', () => {
    expect(primaryMethod([])).toBe('POST');
  });
});

describe('fillParams', () => {
  it('gives every :param segment an example value', () => {
    expect(fillParams('orders/:id/items/:itemId')).toBe('orders/example-id/items/example-itemId');
  });

  it('leaves static segments and the scheme, host and port of a full URL alone', () => {
    expect(fillParams('http://localhost:3000/webhook-test/orders/:id')).toBe(
      'http://localhost:3000/webhook-test/orders/example-id',
    );
    expect(fillParams('https://h.example/webhook/a.b~c-d')).toBe('https://h.example/webhook/a.b~c-d');
  });

  it('only fills segments that start with a colon', () => {
    expect(fillParams('a:b/:c')).toBe('a:b/example-c');
  });

  it('keeps leading and trailing slashes and the empty path', () => {
    expect(fillParams('/:x/')).toBe('/example-x/');
    expect(fillParams('')).toBe('');
  });
});

describe('curlLine', () => {
  const url = 'https://hooks.example/webhook/orders';
  const none: AuthConfig = { type: 'none' };

  it('posts the sample form body for methods with a body', () => {
    expect(SAMPLE).toBe('param1=a&param2=b');
    expect(curlLine(url, 'POST', none)).toBe(`curl -X POST '${url}' -d 'param1=a&param2=b'`);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as Method[]) {
      expect(shellWords(curlLine(url, method, none))).toEqual(['curl', '-X', method, url, '-d', SAMPLE]);
    }
  });

  it('sends the sample as a query string for GET, and with -I for HEAD', () => {
    expect(curlLine(url, 'GET', none)).toBe(`curl '${url}?param1=a&param2=b'`);
    expect(curlLine(url, 'HEAD', none)).toBe(`curl -I '${url}?param1=a&param2=b'`);
  });

  it('puts the auth arguments before the URL', () => {
    expect(shellWords(curlLine(url, 'GET', { type: 'jwt' }))).toEqual([
      'curl',
      '-H',
      'Authorization: Bearer <JWT>',
      `${url}?${SAMPLE}`,
    ]);
    expect(shellWords(curlLine(url, 'HEAD', { type: 'jwt' }))).toEqual([
      'curl',
      '-I',
      '-H',
      'Authorization: Bearer <JWT>',
      `${url}?${SAMPLE}`,
    ]);
  });

  describe('basic auth', () => {
    it('sends the username and password with -u', () => {
      expect(curlLine(url, 'POST', { type: 'basic', username: 'ann', password: 'pw' })).toBe(
        `curl -X POST -u 'ann:pw' '${url}' -d 'param1=a&param2=b'`,
      );
    });

    it('shows placeholders for a missing username and for a missing or masked password', () => {
      const words = (auth: AuthConfig) => shellWords(curlLine(url, 'POST', auth)).slice(3, 5);
      expect(words({ type: 'basic' })).toEqual(['-u', '<username>:<password>']);
      expect(words({ type: 'basic', username: '', password: '' })).toEqual(['-u', '<username>:<password>']);
      expect(words({ type: 'basic', username: 'ann', password: '***' })).toEqual(['-u', 'ann:<password>']);
    });

    it('quotes credentials holding shell characters', () => {
      const auth: AuthConfig = { type: 'basic', username: "o'neil", password: 'p$ss `w` "d"' };
      expect(shellWords(curlLine(url, 'POST', auth))).toEqual([
        'curl',
        '-X',
        'POST',
        '-u',
        'o\'neil:p$ss `w` "d"',
        url,
        '-d',
        SAMPLE,
      ]);
    });
  });

  describe('header auth', () => {
    it('sends the named header with its value', () => {
      expect(curlLine(url, 'POST', { type: 'header', name: 'X-Token', value: 's3cret' })).toBe(
        `curl -X POST -H 'X-Token: s3cret' '${url}' -d 'param1=a&param2=b'`,
      );
    });

    it('defaults the name to Authorization and shows a placeholder for a missing or masked value', () => {
      const header = (auth: AuthConfig) => shellWords(curlLine(url, 'POST', auth))[4];
      expect(header({ type: 'header' })).toBe('Authorization: <header value>');
      expect(header({ type: 'header', name: '', value: '***' })).toBe('Authorization: <header value>');
      expect(header({ type: 'header', name: 'X-Key', value: "it's" })).toBe("X-Key: it's");
    });
  });

  it('jwt auth sends a bearer placeholder, never a secret', () => {
    const line = curlLine(url, 'POST', { type: 'jwt', algorithm: 'HS256', secret: 'do-not-show' });
    expect(line).toBe(`curl -X POST -H 'Authorization: Bearer <JWT>' '${url}' -d 'param1=a&param2=b'`);
    expect(line).not.toContain('do-not-show');
  });

  describe('hmac auth', () => {
    const header = (auth: AuthConfig) => {
      const words = shellWords(curlLine(url, 'POST', auth));
      expect(words.slice(0, 4)).toEqual(['curl', '-X', 'POST', '-H']);
      expect(words.slice(5)).toEqual([url, '-d', SAMPLE]);
      return words[4];
    };

    it('shows the signature header of each preset', () => {
      expect(header({ type: 'hmac', preset: 'github', secret: 'x' })).toBe(
        'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
      );
      expect(header({ type: 'hmac', preset: 'stripe' })).toBe(
        'Stripe-Signature: t=<unix time>,v1=<signature>',
      );
      expect(header({ type: 'hmac', preset: 'slack' })).toBe('X-Slack-Signature: v0=<signature>');
      expect(header({ type: 'hmac', preset: 'shopify' })).toBe(
        'X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>',
      );
      expect(header({ type: 'hmac', preset: 'standard-webhooks' })).toBe('webhook-signature: v1,<signature>');
    });

    it('falls back to X-Signature for no preset or an unknown one', () => {
      expect(header({ type: 'hmac' })).toBe('X-Signature: <signature>');
      expect(header({ type: 'hmac', preset: 'gitlab' })).toBe('X-Signature: <signature>');
    });

    // A lookup in a plain object would find Object.prototype's members and throw on them.
    it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])(
      'treats a preset named %s as an unknown one',
      (preset) => {
        expect(header({ type: 'hmac', preset, secret: 'x' })).toBe('X-Signature: <signature>');
      },
    );

    it('uses the header and prefix of a custom preset', () => {
      expect(header({ type: 'hmac', preset: 'custom', header: 'X-My-Sig', prefix: 'sha1=' })).toBe(
        'X-My-Sig: sha1=<signature>',
      );
      expect(header({ type: 'hmac', preset: 'custom' })).toBe('X-Signature: <signature>');
      expect(header({ type: 'hmac', preset: 'custom', header: '', prefix: '' })).toBe(
        'X-Signature: <signature>',
      );
    });

    it('never puts the signing secret in the line', () => {
      expect(curlLine(url, 'POST', { type: 'hmac', preset: 'custom', secret: 'topsecret' })).not.toContain(
        'topsecret',
      );
    });
  });

  it('quotes a URL holding shell characters', () => {
    const odd = "https://h.example/webhook/it's&$x";
    expect(shellWords(curlLine(odd, 'POST', none))).toEqual(['curl', '-X', 'POST', odd, '-d', SAMPLE]);
    expect(shellWords(curlLine(odd, 'GET', none))).toEqual(['curl', `${odd}?${SAMPLE}`]);
  });
});
