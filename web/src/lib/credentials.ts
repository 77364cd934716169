/** Credentials (SPEC 7c): the types, their fields, and the form's values as the API's `data`. */

// The server's own types (type-only: erased from the bundle), not copies.
export type { Credential, CredentialType, OAuth2Status } from '../../../src/credentials/model';
import type { CredentialType } from '../../../src/credentials/model';

export interface CredentialField {
  key: string;
  label: string;
  /** A secret is typed in a password input; the others (a header name) in a text input. */
  secret: boolean;
  placeholder?: string;
  /** May be left blank (the server takes its default, or none). */
  optional?: boolean;
  /** Picked from these rather than typed: [value sent, label]; the first is the default. */
  choices?: [string | boolean, string][];
  /** A line under the field. */
  help?: string;
}

/** The fields of a database server (`postgres`, `mysql`; SPEC 7e). */
function database(port: string): CredentialField[] {
  return [
    { key: 'host', label: 'Host', secret: false, placeholder: 'db.internal.example.com' },
    { key: 'port', label: 'Port', secret: false, placeholder: port, optional: true },
    { key: 'database', label: 'Database', secret: false, placeholder: 'shop' },
    { key: 'username', label: 'Username', secret: false },
    { key: 'password', label: 'Password', secret: true, optional: true },
    {
      key: 'ssl',
      label: 'TLS',
      secret: false,
      choices: [
        [false, 'Off (plain connection)'],
        [true, "On, the server's certificate checked"],
        ['no-verify', 'On, the certificate not checked'],
      ],
    },
  ];
}

/** The fields of a secret sent under a name the user picks (a header, a query parameter). */
function namedValue(noun: string, placeholder: string): CredentialField[] {
  return [
    { key: 'name', label: `${noun} name`, secret: false, placeholder },
    { key: 'value', label: `${noun} value`, secret: true },
  ];
}

export const CREDENTIAL_TYPES: {
  type: CredentialType;
  label: string;
  help: string;
  fields: CredentialField[];
}[] = [
  {
    type: 'bearer',
    label: 'Bearer token',
    help: 'Sent as Authorization: Bearer <token>.',
    fields: [{ key: 'token', label: 'Token', secret: true }],
  },
  {
    type: 'header',
    label: 'Header',
    help: 'Sent as a request header of that name.',
    fields: namedValue('Header', 'X-Api-Key'),
  },
  {
    type: 'basic',
    label: 'Basic auth',
    help: 'Sent as Authorization: Basic <base64 of username:password>.',
    fields: [
      { key: 'username', label: 'Username', secret: false },
      { key: 'password', label: 'Password', secret: true },
    ],
  },
  {
    type: 'query',
    label: 'Query parameter',
    help: "Added to the URL's query string.",
    fields: namedValue('Parameter', 'api_key'),
  },
  {
    type: 'postgres',
    label: 'PostgreSQL',
    help: 'A database for SQL query steps. Its host must be a public address, or in a private range the operator allowed (HOOKFLOW_SQL_PRIVATE_NETWORKS).',
    fields: database('5432'),
  },
  {
    type: 'mysql',
    label: 'MySQL / MariaDB',
    help: 'A database for SQL query steps. Its host must be a public address, or in a private range the operator allowed (HOOKFLOW_SQL_PRIVATE_NETWORKS).',
    fields: database('3306'),
  },
  {
    type: 'smtp',
    label: 'SMTP server',
    help: 'The server email steps send through, and their sender. TLS certificates are checked against the host; a host on a private address needs HOOKFLOW_ALLOW_PRIVATE_NETWORK.',
    fields: [
      { key: 'host', label: 'Host', secret: false, placeholder: 'smtp.example.com' },
      { key: 'port', label: 'Port', secret: false, placeholder: '587' },
      {
        key: 'security',
        label: 'Security',
        secret: false,
        choices: [
          ['starttls', 'STARTTLS (usually port 587)'],
          ['tls', 'TLS from the start (usually port 465)'],
          ['none', 'None: plain text (a relay on your own network)'],
        ],
      },
      {
        key: 'username',
        label: 'Username',
        secret: false,
        optional: true,
        placeholder: 'none: a relay without a login',
      },
      {
        key: 'password',
        label: 'Password',
        secret: true,
        optional: true,
        placeholder: 'none: a relay without a login',
      },
      { key: 'from', label: 'From', secret: false, placeholder: 'Shop Receipts <receipts@shop.example>' },
    ],
  },
  {
    type: 'oauth2',
    label: 'OAuth2',
    help: 'Sent as Authorization: Bearer <access token>; hookflow gets the token from the provider and renews it. Authorization code: press Connect once it is created.',
    fields: [
      {
        key: 'grantType',
        label: 'Grant type',
        secret: false,
        choices: [
          ['authorization_code', 'Authorization code (a person signs in: Google, Microsoft…)'],
          ['client_credentials', 'Client credentials (app to app, no sign-in)'],
        ],
      },
      {
        key: 'authorizationUrl',
        label: 'Authorization URL',
        secret: false,
        optional: true,
        placeholder: 'https://accounts.google.com/o/oauth2/v2/auth?access_type=offline&prompt=consent',
        help: 'Authorization code only: the page where a person signs in.',
      },
      {
        key: 'tokenUrl',
        label: 'Token URL',
        secret: false,
        placeholder: 'https://oauth2.googleapis.com/token',
      },
      { key: 'clientId', label: 'Client ID', secret: false },
      { key: 'clientSecret', label: 'Client secret', secret: true },
      {
        key: 'scope',
        label: 'Scope',
        secret: false,
        optional: true,
        placeholder: 'https://www.googleapis.com/auth/calendar.readonly',
        help: 'Space-separated, as the provider names them.',
      },
      {
        key: 'audience',
        label: 'Audience',
        secret: false,
        optional: true,
        help: 'Only if the provider asks for one (Auth0).',
      },
    ],
  },
];

/** The address to register with an OAuth2 provider as the redirect (callback) URL. */
export function oauth2CallbackUrl(): string {
  return new URL('oauth2/callback', document.baseURI).href;
}

export function credentialType(type: string) {
  return CREDENTIAL_TYPES.find((t) => t.type === type);
}

/**
 * The form's values as `data`. Creating, every field is needed; rotating (`keepBlank`), a blank
 * field keeps its stored value (the API keeps fields left out), so only what was typed is sent.
 */
export function credentialData(
  type: CredentialType,
  values: Record<string, string>,
  keepBlank: boolean,
): { data: Record<string, string | boolean>; missing: string[] } {
  const data: Record<string, string | boolean> = {};
  const missing: string[] = [];
  for (const f of credentialType(type)?.fields ?? []) {
    const v = values[f.key] ?? '';
    if (f.choices) {
      // A choice is sent as its value (true, false, "no-verify"); creating, the first by default.
      const picked = f.choices.find(([c]) => String(c) === v) ?? (keepBlank ? undefined : f.choices[0]);
      if (picked) data[f.key] = picked[0];
      continue;
    }
    if (v === '') {
      if (!keepBlank && !f.optional) missing.push(f.label);
      continue;
    }
    data[f.key] = v;
  }
  return { data, missing };
}
