/**
 * OAuth2 credentials (SPEC 7e): the access tokens `http` steps send, got from the provider's token
 * endpoint and kept sealed in the store (`oauth2_tokens`), never in a workflow, a record or a log.
 *
 * - Client credentials: a token is fetched at first use and renewed before it expires (`renewAt`)
 *   and after an API answered 401 to it.
 * - Authorization code with PKCE (S256) and `state`: `authorize` starts it (the state's sha256 and
 *   the sealed verifier stored for ten minutes, single use, bound to the credential); the
 *   provider sends the person's browser to `{base_url}/oauth2/callback` (`callback`), which trades
 *   the code for the access and refresh tokens. Refreshed as above; a rotated refresh token
 *   replaces the old one; a refresh the provider refuses sets `needs_reconnect`, and steps fail
 *   with `credential_expired` until a person connects it again.
 *
 * One refresh at a time per credential, across processes: the process that needs a new token
 * takes the row's claim (store/oauth2.ts, a compare-and-set UPDATE on SQLite and PostgreSQL alike),
 * asks the token endpoint and writes the result; the others wait for that write and use it. A
 * refresh token that the provider accepts only once is thus spent once. Within a process, callers
 * needing the same credential share one renewal.
 *
 * The library is oauth4webapi (panva's: dependency-free, follows RFC 6749/7636/9700 closely,
 * builds and checks the token requests and answers, PKCE, client credentials and refresh). Its
 * requests go through `customFetch`: the `http` step's connection pool with the SSRF guard
 * (engine/network.ts), so a token URL reaches the private network only when
 * HOOKFLOW_ALLOW_PRIVATE_NETWORK allows it, like any http step. The client authenticates with
 * `client_secret_post` (the secret in the form body): the method every common provider accepts
 * (Google, Microsoft, Auth0, HubSpot, Salesforce); some reject the Basic header.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as oauth from 'oauth4webapi';
import type { Logger } from 'pino';
import { type Audit, record } from '../audit/audit.js';
import type { TokenResult, TokenSource } from '../engine/credentials.js';
import { loadUndici, NetworkRefused, type Outbound } from '../engine/network.js';
import { AppError } from '../errors.js';
import type { SecretBox } from '../security/secrets.js';
import { credentialsRepo } from '../store/credentials.js';
import { type OAuth2TokensRow, oauth2Repo } from '../store/oauth2.js';
import type { CredentialRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

/** How long a started authorization waits for its callback. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** How long one token request may take. */
const TOKEN_TIMEOUT_MS = 30_000;
/** How long a refresh claim holds: longer than a token request, so a slow one is not raced. */
const CLAIM_MS = TOKEN_TIMEOUT_MS + 15_000;
/** How often a process waiting for another one's refresh looks at the row. */
const WAIT_POLL_MS = 100;
/** Reads of the row per token asked for (a renewal, a wait for another process's, a re-read). */
const MAX_ROUNDS = 5;
/** Renewal starts this long before expiry at least (SPEC 7e: the last 10 % or 60 s)… */
const RENEW_BEFORE_MS = 60_000;
/** …or this part of the token's life before it, when that is longer. */
const RENEW_FRACTION = 0.1;

/** The clear `data` of an `oauth2` credential. */
export interface OAuth2Data {
  grantType: 'client_credentials' | 'authorization_code';
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
  authorizationUrl?: string;
}

/** The sealed tokens' JSON. */
interface Tokens {
  accessToken: string;
  refreshToken?: string;
}

/**
 * When a token got at `refreshedAt` that expires at `expiresAt` (epoch ms) is renewed: in its last
 * 10 % or its last 60 s, whichever is longer, but not before half its life (a token that lives a
 * minute is not renewed at every use). 1 h → 6 min before expiry; 5 min → 60 s; 60 s → 30 s.
 */
export function renewAt(refreshedAt: number, expiresAt: number): number {
  const life = Math.max(0, expiresAt - refreshedAt);
  const margin = Math.min(Math.max(life * RENEW_FRACTION, RENEW_BEFORE_MS), life / 2);
  return expiresAt - margin;
}

/** What the callback page says. */
export type CallbackOutcome =
  | { ok: true; credential: string }
  | { ok: false; status: number; title: string; message: string };

export interface OAuth2Deps {
  store: Store;
  secrets: SecretBox;
  /** The `http` steps' outbound side: the SSRF policy and its connection pool. */
  outbound: Outbound;
  /** HOOKFLOW_BASE_URL: the callback is `{baseUrl}/oauth2/callback`. */
  baseUrl: string;
  log: Logger;
  now?: () => number;
}

export class OAuth2 implements TokenSource {
  readonly redirectUri: string;
  readonly #store: Store;
  readonly #secrets: SecretBox;
  readonly #outbound: Outbound;
  readonly #log: Logger;
  readonly #now: () => number;
  /** This process, as the holder of refresh claims. */
  readonly #owner = `oauth2:${randomUUID()}`;
  /** Renewals in progress in this process, by credential id: callers share one. */
  readonly #renewing = new Map<string, Promise<TokenResult | 'again'>>();

  constructor({ store, secrets, outbound, baseUrl, log, now = Date.now }: OAuth2Deps) {
    this.#store = store;
    this.#secrets = secrets;
    this.#outbound = outbound;
    this.#log = log;
    this.#now = now;
    this.redirectUri = `${baseUrl.replace(/\/+$/, '')}/oauth2/callback`;
  }

  /**
   * Starts an authorization (authorization code grant): the provider's URL to open, with PKCE
   * (S256) and a `state` that names this authorization alone.
   */
  async authorize(id: string, audit: Audit | undefined): Promise<{ authorizeUrl: string }> {
    const row = await credentialsRepo.get(this.#store.db, id);
    if (!row) throw new AppError('not_found', `There is no credential with id ${id}.`);
    if (row.type !== 'oauth2')
      throw new AppError(
        'validation_failed',
        `Credential "${row.name}" is a ${row.type} credential, not oauth2.`,
        {
          fields: [{ field: '/type', message: 'only oauth2 credentials are connected' }],
        },
      );
    const data = this.#data(row);
    if (data.grantType !== 'authorization_code' || !data.authorizationUrl)
      throw new AppError(
        'validation_failed',
        `Credential "${row.name}" uses the client_credentials grant: it gets its tokens by itself at first use, nobody connects it.`,
        { fields: [{ field: '/data/grantType', message: 'is not authorization_code' }] },
      );
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const now = this.#now();
    await this.#store.transaction(async (trx) => {
      await oauth2Repo.deleteExpiredAuthorizations(trx, new Date(now).toISOString());
      await oauth2Repo.insertAuthorization(trx, {
        state_hash: sha256(state),
        credential_id: id,
        verifier: this.#secrets.seal(verifier),
        actor_type: audit?.actor.type ?? 'system',
        actor_id: audit?.actor.id ?? null,
        actor_name: audit?.actor.name ?? 'hookflow',
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + AUTHORIZATION_TTL_MS).toISOString(),
      });
    });
    // The provider's own query parameters stay (Google's access_type=offline&prompt=consent).
    const url = new URL(data.authorizationUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', data.clientId);
    url.searchParams.set('redirect_uri', this.redirectUri);
    if (data.scope) url.searchParams.set('scope', data.scope);
    if (data.audience) url.searchParams.set('audience', data.audience);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { authorizeUrl: url.href };
  }

  /**
   * The provider's redirect back (`query`: its parameters): takes the authorization its `state`
   * names (once), trades the code for tokens, stores them sealed with the audit row of the connect.
   */
  async callback(query: Record<string, string>, ip: string | null): Promise<CallbackOutcome> {
    const again = 'Go back to the Credentials page in hookflow and press Connect again.';
    if (typeof query.state !== 'string' || query.state === '')
      return {
        ok: false,
        status: 400,
        title: 'This address is not a sign-in answer',
        message: `It carries no state, so it belongs to no connection hookflow started. ${again}`,
      };
    const now = this.#now();
    const pending = await oauth2Repo.takeAuthorization(
      this.#store.db,
      sha256(query.state),
      new Date(now).toISOString(),
    );
    if (!pending)
      return {
        ok: false,
        status: 400,
        title: 'This sign-in has expired or was already used',
        message: `A connection must be finished within ${AUTHORIZATION_TTL_MS / 60_000} minutes, and each sign-in works once. ${again}`,
      };
    const row = await credentialsRepo.get(this.#store.db, pending.credential_id);
    if (row?.type !== 'oauth2')
      return {
        ok: false,
        status: 404,
        title: 'The credential is gone',
        message: 'The credential this sign-in was for was deleted meanwhile. Nothing was stored.',
      };
    const data = this.#data(row);
    const { as, client } = endpoints(data);
    let tokens: Tokens;
    let expiresIn: number | undefined;
    try {
      // `iss` (RFC 9207) is left out: the credential names a token URL, not its issuer, and a
      // credential talks to one provider (the mix-up that `iss` guards against needs several).
      const given = new URLSearchParams(query);
      given.delete('iss');
      const params = oauth.validateAuthResponse(as, client, given, query.state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(data.clientSecret),
        params,
        this.redirectUri,
        this.#secrets.reveal(pending.verifier),
        this.#requestOptions(data.tokenUrl),
      );
      const result = await oauth.processAuthorizationCodeResponse(as, client, response);
      tokens = {
        accessToken: result.access_token,
        ...(result.refresh_token ? { refreshToken: result.refresh_token } : {}),
      };
      expiresIn = result.expires_in;
    } catch (err) {
      const message = describe(err);
      await this.#store.transaction(async (trx) => {
        await oauth2Repo.ensure(trx, row.id);
        await oauth2Repo.setError(trx, row.id, message);
      });
      this.#log.info({ credentialId: row.id, error: message }, 'oauth2 connect failed');
      const denied = err instanceof oauth.AuthorizationResponseError;
      return {
        ok: false,
        status: denied ? 400 : 502,
        title: denied ? 'The provider did not grant access' : 'The provider refused the sign-in',
        message: `${message}. Nothing was stored for "${row.name}". ${denied ? 'If that was a mistake, go' : 'Check the client id, secret and token URL of the credential, then go'} back to the Credentials page in hookflow and press Connect again.`,
      };
    }
    const at = this.#now();
    await this.#store.transaction(async (trx) => {
      await oauth2Repo.connect(trx, row.id, {
        state: 'connected',
        tokens: this.#secrets.seal(JSON.stringify(tokens)),
        expires_at: expiresIn === undefined ? null : new Date(at + expiresIn * 1000).toISOString(),
        refreshed_at: new Date(at).toISOString(),
        last_error: null,
      });
      // Who pressed Connect (the callback itself carries no API token), from where the browser came back.
      await record(
        trx,
        { actor: { type: pending.actor_type, id: pending.actor_id, name: pending.actor_name }, ip },
        {
          action: 'credential.connect',
          target: { type: 'credential', id: row.id, name: row.name },
          details: { refreshToken: tokens.refreshToken !== undefined },
        },
      );
    });
    return { ok: true, credential: row.name };
  }

  /** The access token of credential `id` (TokenSource: what `http` steps send). */
  async accessToken(id: string, rejected?: string): Promise<TokenResult> {
    let refused = rejected;
    let seen: number | undefined;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const cred = await credentialsRepo.get(this.#store.db, id);
      if (cred?.type !== 'oauth2')
        return { error: `Credential "${id}" does not exist (any more), or is no OAuth2 credential.` };
      const data = this.#data(cred);
      const row = await oauth2Repo.get(this.#store.db, id);
      // Written since the token was refused (by this renewal or another's): whatever it holds now is new.
      if (seen !== undefined && row && row.version !== seen) refused = undefined;
      seen ??= row?.version ?? 0;
      if (row?.state === 'needs_reconnect') return expired(cred.name, row.last_error);
      const tokens = this.#tokens(row);
      if (data.grantType === 'authorization_code' && !tokens)
        return {
          error: `Credential "${cred.name}" is not connected yet: press Connect beside it on the Credentials page and sign in with the provider.`,
          code: 'credential_expired',
        };
      if (tokens && tokens.accessToken !== refused && !this.#due(row!)) return { token: tokens.accessToken };
      const result = await this.#renewOnce(cred, data, row);
      if (result !== 'again') return result;
    }
    return {
      error: `Could not get an access token for credential "${id}": another process kept renewing it. Try again.`,
    };
  }

  /** The states of these credentials' tokens (GET /credentials), by id; absent: not connected. */
  async states(ids: readonly string[]): Promise<Map<string, OAuth2TokensRow>> {
    const rows = await oauth2Repo.getMany(this.#store.db, ids);
    return new Map(rows.map((r) => [r.credential_id, r]));
  }

  /** One renewal per credential at a time in this process (see the header for across processes). */
  #renewOnce(
    cred: CredentialRow,
    data: OAuth2Data,
    row: OAuth2TokensRow | undefined,
  ): Promise<TokenResult | 'again'> {
    const running = this.#renewing.get(cred.id);
    if (running) return running.then(() => 'again' as const);
    const renewal = this.#renew(cred, data, row).finally(() => this.#renewing.delete(cred.id));
    this.#renewing.set(cred.id, renewal);
    return renewal;
  }

  /**
   * Gets a new access token under the row's claim, or waits for the process holding it. 'again':
   * the row changed (renewed, here or elsewhere): read it again.
   */
  async #renew(
    cred: CredentialRow,
    data: OAuth2Data,
    read: OAuth2TokensRow | undefined,
  ): Promise<TokenResult | 'again'> {
    const db = this.#store.db;
    await oauth2Repo.ensure(db, cred.id);
    const now = this.#now();
    const claimed = await oauth2Repo.claim(
      db,
      cred.id,
      this.#owner,
      new Date(now).toISOString(),
      new Date(now + CLAIM_MS).toISOString(),
    );
    if (!claimed) {
      await this.#waitForClaim(cred.id);
      return 'again';
    }
    const row = (await oauth2Repo.get(db, cred.id))!;
    // Renewed by another process between the read and the claim.
    if (row.version !== (read?.version ?? 0)) {
      await oauth2Repo.release(db, cred.id, this.#owner);
      return 'again';
    }
    const old = this.#tokens(row);
    if (data.grantType === 'authorization_code' && !old?.refreshToken) {
      const lastError = old
        ? 'The access token expired and the provider gave no refresh token to renew it (Google gives one with access_type=offline&prompt=consent in the authorization URL).'
        : 'Not connected.';
      await oauth2Repo.write(db, cred.id, row.version, {
        state: old ? 'needs_reconnect' : 'not_connected',
        tokens: null,
        expires_at: null,
        refreshed_at: row.refreshed_at,
        last_error: lastError,
      });
      return expired(cred.name, lastError);
    }
    const { as, client } = endpoints(data);
    let result: oauth.TokenEndpointResponse;
    try {
      const options = this.#requestOptions(data.tokenUrl);
      const auth = oauth.ClientSecretPost(data.clientSecret);
      if (data.grantType === 'client_credentials') {
        const params: Record<string, string> = {};
        if (data.scope) params.scope = data.scope;
        if (data.audience) params.audience = data.audience;
        const response = await oauth.clientCredentialsGrantRequest(as, client, auth, params, options);
        result = await oauth.processClientCredentialsResponse(as, client, response);
      } else {
        const response = await oauth.refreshTokenGrantRequest(as, client, auth, old!.refreshToken!, options);
        result = await oauth.processRefreshTokenResponse(as, client, response);
      }
    } catch (err) {
      const message = describe(err);
      this.#log.info({ credentialId: cred.id, error: message }, 'oauth2 token request failed');
      // The provider said no to the refresh token (invalid_grant: revoked, expired, already
      // used): only a person signing in again helps. Anything else (down, 5xx, a network
      // error) may pass: the tokens are kept and the next use tries again.
      if (refusal(err) && data.grantType === 'authorization_code') {
        await oauth2Repo.write(db, cred.id, row.version, {
          state: 'needs_reconnect',
          tokens: null,
          expires_at: null,
          refreshed_at: row.refreshed_at,
          last_error: message,
        });
        return expired(cred.name, message);
      }
      await oauth2Repo.setError(db, cred.id, message);
      await oauth2Repo.release(db, cred.id, this.#owner);
      return {
        error: `The token endpoint of credential "${cred.name}" gave no access token: ${message}.${refusal(err) ? ' Check its client id, client secret, scope and audience.' : ''}`,
      };
    }
    const at = this.#now();
    const tokens: Tokens = {
      accessToken: result.access_token,
      // A rotated refresh token replaces the old one, which the provider may accept no more.
      ...(result.refresh_token
        ? { refreshToken: result.refresh_token }
        : old?.refreshToken
          ? { refreshToken: old.refreshToken }
          : {}),
    };
    const written = await oauth2Repo.write(db, cred.id, row.version, {
      state: 'connected',
      tokens: this.#secrets.seal(JSON.stringify(tokens)),
      expires_at:
        result.expires_in === undefined ? null : new Date(at + result.expires_in * 1000).toISOString(),
      refreshed_at: new Date(at).toISOString(),
      last_error: null,
    });
    if (!written)
      this.#log.warn({ credentialId: cred.id }, 'oauth2 tokens changed during a refresh; kept theirs');
    return 'again';
  }

  /** Waits until the claim another process holds is released or lapses, or the tokens change. */
  async #waitForClaim(id: string): Promise<void> {
    const start = await oauth2Repo.get(this.#store.db, id);
    const deadline = this.#now() + CLAIM_MS + 5_000;
    while (this.#now() < deadline) {
      await sleep(WAIT_POLL_MS);
      const row = await oauth2Repo.get(this.#store.db, id);
      if (
        !row ||
        row.claimed_by === null ||
        (row.claim_until !== null && row.claim_until <= new Date(this.#now()).toISOString()) ||
        row.version !== start?.version
      )
        return;
    }
  }

  /** Whether the row's access token is in its renewal window (or past its expiry). */
  #due(row: OAuth2TokensRow): boolean {
    if (row.expires_at === null) return false;
    const expires = Date.parse(row.expires_at);
    const refreshed = row.refreshed_at === null ? expires : Date.parse(row.refreshed_at);
    return this.#now() >= renewAt(refreshed, expires);
  }

  #tokens(row: OAuth2TokensRow | undefined): Tokens | undefined {
    return row?.tokens ? (JSON.parse(this.#secrets.reveal(row.tokens)) as Tokens) : undefined;
  }

  #data(row: CredentialRow): OAuth2Data {
    return JSON.parse(this.#secrets.reveal(row.data)) as OAuth2Data;
  }

  /**
   * Token requests go through the http steps' pool (the SSRF guard on every name lookup; IP
   * literals checked here), time out, and the token endpoint's answer loses its `id_token`:
   * hookflow signs nobody in and keeps none, and oauth4webapi would check that token's issuer
   * against an issuer URL the credential does not name (Google's differs from its token URL's host).
   */
  #requestOptions(tokenUrl: string): oauth.TokenEndpointRequestOptions {
    const outbound = this.#outbound;
    return {
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      // http: a provider on the private network (allowed by the policy) or in tests.
      [oauth.allowInsecureRequests]: tokenUrl.toLowerCase().startsWith('http:'),
      [oauth.customFetch]: async (url, init) => {
        const target = new URL(url);
        const why = outbound.refuseLiteral(target.hostname);
        if (why) throw new NetworkRefused(target.hostname, target.hostname.replace(/^\[|\]$/g, ''), why);
        const [{ fetch }, dispatcher] = await Promise.all([loadUndici(), outbound.dispatcher()]);
        const res = await fetch(url, { ...(init as object), dispatcher } as never);
        const body = await res.text();
        let text = body;
        if ((res.headers.get('content-type') ?? '').includes('json')) {
          try {
            const json = JSON.parse(body) as Record<string, unknown>;
            if (json && typeof json === 'object' && 'id_token' in json) {
              delete json.id_token;
              text = JSON.stringify(json);
            }
          } catch {
            // Not JSON after all: oauth4webapi says so.
          }
        }
        return new Response(text, { status: res.status, headers: res.headers as unknown as Headers });
      },
    };
  }
}

/** The step error of a credential that needs a person (SPEC 7e `credential_expired`). */
function expired(name: string, lastError: string | null): TokenResult {
  return {
    error: `Credential "${name}" needs to be connected again: ${lastError ?? 'the provider refused its refresh token'}. Press Reconnect beside it on the Credentials page.`,
    code: 'credential_expired',
  };
}

/** Whether the token endpoint refused the grant itself (4xx with an OAuth error), not failed for a passing reason. */
function refusal(err: unknown): boolean {
  return (
    (err instanceof oauth.ResponseBodyError && err.status >= 400 && err.status < 500) ||
    err instanceof oauth.WWWAuthenticateChallengeError
  );
}

/** A token endpoint's or the network's error as one line for a person (never a token: OAuth errors carry none). */
function describe(err: unknown): string {
  if (err instanceof oauth.ResponseBodyError)
    return `${err.error}${err.error_description ? ` (${err.error_description})` : ''}, HTTP ${err.status}`;
  if (err instanceof oauth.AuthorizationResponseError)
    return `${err.error}${err.error_description ? ` (${err.error_description})` : ''}`;
  if (err instanceof oauth.WWWAuthenticateChallengeError)
    return `HTTP ${err.status}: the client was not accepted`;
  for (let e = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof NetworkRefused) return e.message.replace(/\.$/, '');
  const e = err as { name?: string; message?: string; cause?: { message?: string; code?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${TOKEN_TIMEOUT_MS / 1000} s`;
  const detail = e?.cause?.message ?? e?.cause?.code;
  return `${e?.message ?? String(err)}${detail ? ` (${detail})` : ''}`;
}

function endpoints(data: OAuth2Data): { as: oauth.AuthorizationServer; client: oauth.Client } {
  const token = new URL(data.tokenUrl);
  return {
    as: {
      issuer: token.origin,
      token_endpoint: data.tokenUrl,
      ...(data.authorizationUrl ? { authorization_endpoint: data.authorizationUrl } : {}),
    },
    client: { client_id: data.clientId },
  };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
