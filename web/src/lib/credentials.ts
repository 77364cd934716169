/** Credentials (SPEC 7c): the types, their fields, and the form's values as the API's `data`. */

// The server's own types (type-only: erased from the bundle), not copies.
export type { Credential, CredentialType } from '../../../src/credentials/model';
import type { CredentialType } from '../../../src/credentials/model';

export interface CredentialField {
  key: string;
  label: string;
  /** A secret is typed in a password input; the others (a header name) in a text input. */
  secret: boolean;
  placeholder?: string;
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
];

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
): { data: Record<string, string>; missing: string[] } {
  const data: Record<string, string> = {};
  const missing: string[] = [];
  for (const f of credentialType(type)?.fields ?? []) {
    const v = values[f.key] ?? '';
    if (v === '') {
      if (!keepBlank) missing.push(f.label);
      continue;
    }
    data[f.key] = v;
  }
  return { data, missing };
}
