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
 * `data` is stored sealed and never returned: the API shows each value as "***". Values are
 * strings, or numbers and booleans where a type's field is one (a port); a number sent as a
 * string ("587") is taken as the number.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { HEADER_NAME } from '../engine/steps/types.js';

const Value = Type.String({ minLength: 1, maxLength: 8192 });
/** A value sent in a header: no line breaks or NUL (they would split or end the header). */
const HeaderValue = Type.String({ minLength: 1, maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' });

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
      'The fields of the type: bearer {token}, header {name, value}, basic {username, password}, query {name, value}, smtp {host, port, security, username, password, from}, postgres and mysql {host, port, database, username, password, ssl}. Write-only: answers show each value as "***".',
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
});

export interface Credential {
  id: string;
  name: string;
  type: CredentialType;
  /** Field names only, values masked. */
  data: Record<string, '***'>;
  createdAt: string;
  updatedAt: string;
}
