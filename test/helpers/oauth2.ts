/**
 * A real OAuth2 server for the tests: oauth2-mock-server's service (authorize endpoint with PKCE,
 * token endpoint issuing signed JWT access tokens and rotating refresh tokens) on a loopback port.
 * Every token request and answer is kept; `answer` changes the next answers (an `expires_in`, a
 * refusal), `hold` keeps token requests waiting until released (two workers at once).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Issuer, OAuth2Service } from 'oauth2-mock-server';

export interface TokenExchange {
  grantType: string;
  /** The form the client sent (client_secret included: the mock is the provider). */
  body: Record<string, string>;
  status: number;
  response: Record<string, unknown>;
}

export type Answer = (exchange: {
  grantType: string;
  body: Record<string, string>;
  response: { statusCode: number; body: Record<string, unknown> };
}) => void;

export interface MockOAuth2 {
  url: string;
  tokenUrl: string;
  authorizeUrl: string;
  exchanges: TokenExchange[];
  /** Changes each answer of the token endpoint from now on (undefined: as the mock answers). */
  answer(fn: Answer | undefined): void;
  /** Token requests wait until the returned function is called. */
  hold(): () => void;
  /** Token requests waiting (held) now. */
  waiting(): number;
  /** Every token, access and refresh, the server has handed out. */
  tokens(): string[];
  close(): Promise<void>;
}

export async function startOAuth2Server(): Promise<MockOAuth2> {
  const issuer = new OAuth2Issuer();
  await issuer.keys.generate('RS256');
  const service = new OAuth2Service(issuer);
  const exchanges: TokenExchange[] = [];
  let answer: Answer | undefined;
  let held: Promise<void> | undefined;
  let waiting = 0;
  // Each token unique, as a real provider's are (the mock's JWTs of one second would be equal).
  service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    token.payload.jti = randomUUID();
  });
  service.on('beforeResponse', (response: { statusCode: number; body: Record<string, unknown> }, req) => {
    const body = { ...(req as { body: Record<string, string> }).body };
    const grantType = body.grant_type ?? '';
    answer?.({ grantType, body, response });
    exchanges.push({ grantType, body, status: response.statusCode, response: { ...response.body } });
  });
  const handler = service.requestHandler;
  const server = http.createServer((req, res) => {
    const wait = req.method === 'POST' && req.url?.startsWith('/token') ? held : undefined;
    if (wait) {
      waiting++;
      void wait.then(() => {
        waiting--;
        handler(req, res);
      });
    } else handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  issuer.url = url;
  return {
    url,
    tokenUrl: `${url}/token`,
    authorizeUrl: `${url}/authorize`,
    exchanges,
    answer(fn) {
      answer = fn;
    },
    hold() {
      let release!: () => void;
      held = new Promise<void>((r) => {
        release = r;
      });
      return () => {
        held = undefined;
        release();
      };
    },
    waiting: () => waiting,
    tokens() {
      return exchanges.flatMap((e) =>
        [e.response.access_token, e.response.refresh_token, e.response.id_token].filter(
          (t): t is string => typeof t === 'string',
        ),
      );
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
