/**
 * Credentials (SPEC 7c): the secrets of outbound calls, kept out of workflows. A credential has a
 * `type` saying how it is applied to an `http` step's request, and `data`, the type's fields:
 * - `bearer` `{token}` → `Authorization: Bearer <token>`
 * - `header` `{name, value}` → that header
 * - `basic` `{username, password}` → `Authorization: Basic base64(username:password)`
 * - `query` `{name, value}` → that query parameter, added to the URL's query
 * - `smtp` `{host, port, security, username?, password?, from}` → the server an `email` step sends
 *   through (SPEC 7e; engine/mail.ts)
 * - `postgres`, `mysql` `{host, port, database, username, password, ssl}` → the database an `sql`
 *   step connects to (SPEC 7e; engine/steps/sql.ts)
 * - `oauth2` `{grantType, tokenUrl, clientId, clientSecret, scope?, audience?, authorizationUrl?}`
 *   → `Authorization: Bearer <access token>`, the token got and renewed by credentials/oauth2.ts
 * `data` is stored sealed and never returned: the API shows each value as "***". Values are
 * strings, or numbers and booleans where a type's field is one (a port); a number sent as a
 * string ("587") is taken as the number.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { HEADER_NAME } from '../engine/steps/types.js';

const Value = Type.String({ minLength: 1, maxLength: 8192 });
/** A value sent in a header: no line breaks or NUL (they would split or end the header). */
const HeaderValue = Type.String({ minLength: 1, maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' });
/** An absolute http(s) URL (an OAuth2 provider's endpoints). */
const HttpUrl = Type.String({ minLength: 8, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' });

/**
 * A database server (`postgres`, `mysql`): `port` defaults to the server's usual one; `password`
 * may be empty (a server that trusts the network); `ssl`: false (plain), true (TLS, the server's
 * certificate checked against the system's CAs) or "no-verify" (TLS, certificate not checked).
 */
function database(defaultPort: number) {
  return Type.Object(
    {
      // A host name or an IP address (an IPv6 one without brackets); no spaces, no scheme, no path.
      host: Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/@]+$' }),
      port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: defaultPort })),
      database: Type.String({ minLength: 1, maxLength: 128 }),
      username: Type.String({ minLength: 1, maxLength: 128 }),
      password: Type.Optional(Type.String({ maxLength: 8192 })),
      ssl: Type.Optional(Type.Union([Type.Boolean(), Type.Literal('no-verify')])),
    },
    { additionalProperties: false },
  );
}

export const CREDENTIAL_DATA = {
  bearer: Type.Object({ token: HeaderValue }, { additionalProperties: false }),
  header: Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 256, pattern: HEADER_NAME.source }), value: HeaderValue },
    { additionalProperties: false },
  ),
  basic: Type.Object(
    {
      // A colon would end the user name in `user:password` (RFC 7617).
      username: Type.String({ minLength: 1, maxLength: 512, pattern: '^[^:]*$' }),
      // Empty is allowed: some APIs take the key as the user name and no password (Stripe).
      password: Type.String({ maxLength: 8192 }),
    },
    { additionalProperties: false },
  ),
  query: Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 256 }), value: Value },
    { additionalProperties: false },
  ),
  smtp: Type.Object(
    {
      // A host name or an IP address (an IPv6 one without brackets); no spaces, no scheme.
      host: Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/@]+$' }),
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
      security: Type.Union([Type.Literal('tls'), Type.Literal('starttls'), Type.Literal('none')], {
        description:
          'tls: TLS from the first byte (port 465); starttls: plain, then upgraded, and refused if the server cannot (587); none: plain text (a local relay).',
      }),
      // Both or neither: a relay that takes mail without authentication has none.
      username: Type.Optional(Type.String({ maxLength: 512 })),
      password: Type.Optional(Type.String({ maxLength: 8192 })),
      // An address, or `Name <address>`; the envelope sender and the From header.
      from: Type.String({ minLength: 3, maxLength: 998, pattern: '^[^\\r\\n]*@[^\\r\\n]*$' }),
    },
    { additionalProperties: false },
  ),
  postgres: database(5432),
  mysql: database(3306),
  oauth2: Type.Object(
    {
      grantType: Type.Union([Type.Literal('client_credentials'), Type.Literal('authorization_code')]),
      tokenUrl: HttpUrl,
      clientId: Type.String({ minLength: 1, maxLength: 1024 }),
      clientSecret: Type.String({ minLength: 1, maxLength: 8192 }),
      scope: Type.Optional(Type.String({ maxLength: 4096 })),
      audience: Type.Optional(Type.String({ maxLength: 2048 })),
      // Required for authorization_code (checked in oauth2Rules: a schema cannot say "when").
      authorizationUrl: Type.Optional(HttpUrl),
    },
    { additionalProperties: false },
  ),
} as const satisfies Record<string, TSchema>;

export type CredentialType = keyof typeof CREDENTIAL_DATA;
export const CREDENTIAL_TYPES = Object.keys(CREDENTIAL_DATA) as CredentialType[];

const TypeSchema = Type.Unsafe<CredentialType>(Type.Union(CREDENTIAL_TYPES.map((t) => Type.Literal(t))));

/** A field's value as stored: text, or a number or boolean where the type's field is one. */
export type CredentialValue = string | number | boolean;

const DataSchema = Type.Record(
  Type.String({ maxLength: 64 }),
  Type.Union([Type.String({ maxLength: 8192 }), Type.Number(), Type.Boolean()]),
  {
    maxProperties: 16,
    description:
      'The fields of the type: bearer {token}, header {name, value}, basic {username, password}, query {name, value}, smtp {host, port, security, username, password, from}, oauth2 {grantType, tokenUrl, clientId, clientSecret, scope?, audience?, authorizationUrl?}, postgres and mysql {host, port, database, username, password, ssl}. Write-only: answers show each value as "***".',
  },
);

export const CredentialCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    type: TypeSchema,
    data: DataSchema,
  },
  { additionalProperties: false },
);
export type CredentialCreate = Static<typeof CredentialCreateSchema>;

/** PATCH (rotate): a new name and/or new values; fields left out, or sent as "***", are kept. */
export const CredentialPatchSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    data: Type.Optional(DataSchema),
  },
  { additionalProperties: false },
);
export type CredentialPatch = Static<typeof CredentialPatchSchema>;

export const CredentialSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: TypeSchema,
  data: Type.Record(Type.String(), Type.Literal('***'), {
    description: 'The fields this credential holds, each value shown as "***".',
  }),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  oauth2: Type.Optional(
    Type.Object(
      {
        state: Type.Union([
          Type.Literal('not_connected'),
          Type.Literal('connected'),
          Type.Literal('needs_reconnect'),
        ]),
        expiresAt: Type.Union([Type.String(), Type.Null()]),
        refreshedAt: Type.Union([Type.String(), Type.Null()]),
        lastError: Type.Union([Type.String(), Type.Null()]),
      },
      {
        description:
          'oauth2 credentials only: whether it holds a token (`needs_reconnect`: the provider refused its refresh token; connect it again), when the access token expires and was last got, and the last error. Never a token.',
      },
    ),
  ),
});

export type OAuth2State = 'not_connected' | 'connected' | 'needs_reconnect';

export interface OAuth2Status {
  state: OAuth2State;
  expiresAt: string | null;
  refreshedAt: string | null;
  lastError: string | null;
}

export interface Credential {
  id: string;
  name: string;
  type: CredentialType;
  /** Field names only, values masked. */
  data: Record<string, '***'>;
  createdAt: string;
  updatedAt: string;
  /** `oauth2` credentials only. */
  oauth2?: OAuth2Status;
}

/**
 * Rules of the `oauth2` data that its schema cannot state: the authorization code grant needs the
 * provider's authorization endpoint. Fields as JSON pointers inside `data`.
 */
export function oauth2Rules(data: Record<string, unknown>): { field: string; message: string }[] {
  if (data.grantType === 'authorization_code' && !data.authorizationUrl)
    return [
      {
        field: '/data/authorizationUrl',
        message: 'is required for the authorization_code grant (the provider page a person signs in on)',
      },
    ];
  return [];
}

export const AuthorizeSchema = Type.Object({
  authorizeUrl: Type.String({
    description:
      "The provider's page to open in the person's browser; it comes back to {base_url}/oauth2/callback, which stores the tokens.",
  }),
});
