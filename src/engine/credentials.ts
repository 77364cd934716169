/**
 * Credentials at run time (SPEC 7c). The executor unseals the credentials a workflow version names
 * and passes them with the run (RunContext.credentials, across to the engine thread); an `http`
 * step with `"credential": "<id>"` applies one to its request here. Clear values stay in the run's
 * memory: what the step records of its request shows them as "***", and `scrubber` takes them out
 * of anything else it records or passes on (an API that echoes the key back in an error body, say),
 * in every form FORMS lists: URL-encoded or not, base64, and in bodies of any content type.
 */
/** What records show instead of a secret (as workflows/model.ts MASK; the engine imports no workflow module). */
const MASK = '***';

export type CredentialType =
  | 'bearer'
  | 'header'
  | 'basic'
  | 'query'
  | 'smtp'
  | 'postgres'
  | 'mysql'
  | 'oauth2';

export interface RunCredential {
  type: CredentialType;
  /**
   * The type's fields, in clear (text, or a number or boolean where the field is one: a port). An
   * `oauth2` credential's are empty: its client secret stays with the executor, which hands out
   * access tokens one request at a time (TokenSource).
   */
  data: Record<string, string | number | boolean>;
}

/**
 * An access token of an `oauth2` credential, or why there is none. `credential_expired`: the
 * provider refused the credential's refresh token, or it was never connected; a person must
 * connect it (again) before steps can use it.
 */
export type TokenResult = { token: string } | { error: string; code?: 'credential_expired' };

/**
 * Where the engine gets the access tokens of `oauth2` credentials (credentials/oauth2.ts, reached
 * from the engine thread through its port). `rejected`: the token an API just answered 401 to;
 * a token other than that one is returned (renewed, unless another run renewed it already).
 */
export interface TokenSource {
  accessToken(credentialId: string, rejected?: string): Promise<TokenResult>;
}

export type RunCredentials = Record<string, RunCredential>;

export interface Applied {
  /** The lower-cased header this credential set, if any. */
  header?: string;
  /** The query parameter it set, if any. */
  query?: string;
  /** Clear strings to keep out of records (the secret values and the header values built of them). */
  secrets: string[];
}

/** Sets the credential on the request being built (headers lower-cased, as the http step keeps them). */
export function applyCredential(cred: RunCredential, url: URL, headers: Record<string, string>): Applied {
  // The types applied to a request hold text only (credentials/model.ts).
  const d = cred.data as Record<string, string>;
  switch (cred.type) {
    case 'oauth2':
    case 'bearer': {
      // oauth2: the http step puts the access token it was given in `token`.
      const value = `Bearer ${d.token ?? ''}`;
      headers.authorization = value;
      return { header: 'authorization', secrets: [d.token ?? '', value] };
    }
    case 'header': {
      const name = (d.name ?? '').toLowerCase();
      headers[name] = d.value ?? '';
      return { header: name, secrets: [d.value ?? ''] };
    }
    case 'basic': {
      const encoded = Buffer.from(`${d.username ?? ''}:${d.password ?? ''}`, 'utf8').toString('base64');
      const value = `Basic ${encoded}`;
      headers.authorization = value;
      return { header: 'authorization', secrets: [d.password ?? '', encoded, value] };
    }
    case 'query': {
      url.searchParams.set(d.name ?? '', d.value ?? '');
      // As sent (form-encoded in the URL) or echoed decoded: both are forms scrubber() looks for.
      return { query: d.name ?? '', secrets: [d.value ?? ''] };
    }
    default:
      // Refused on save (a step names only the credential types it takes, StepType.credentialTypes).
      throw new Error(`A ${cred.type} credential cannot be applied to an HTTP request.`);
  }
}

/** The URL as recorded: the credential's query value as "***". */
export function maskedUrl(url: URL, applied: Applied | undefined): string {
  if (!applied?.query || !url.searchParams.has(applied.query)) return url.href;
  const copy = new URL(url.href);
  // URLSearchParams leaves `*` as it is: the recorded query reads `name=***`.
  copy.searchParams.set(applied.query, MASK);
  return copy.href;
}

/** Headers as recorded: the credential's header as "***". */
export function maskedHeaders(
  headers: Record<string, string>,
  applied: Applied | undefined,
): Record<string, string> {
  if (!applied?.header || !(applied.header in headers)) return { ...headers };
  return { ...headers, [applied.header]: MASK };
}

/**
 * The forms in which a secret is looked for, wherever the engine stores or answers what a remote
 * server sent back. Each turns the secret's characters (`text`: a JS string; `bytes`: its UTF-8
 * bytes, one latin1 character each) into the source of a regular expression.
 * - `url`: the value as it is, or URL-decoded and URL-encoded in any mix: each character itself or
 *   percent-encoded byte by byte (upper- or lower-case hex: encodeURIComponent, every byte escaped,
 *   a server's own encoder), a space also as `+` (application/x-www-form-urlencoded). The clear
 *   value is the mix with nothing encoded.
 * - `base64`: standard and URL alphabets, whole (a Basic header echoed), or the characters the
 *   value's bytes alone determine, so that it is also caught at the start of a longer encoded text.
 * - `utf16` (bytes only): UTF-16LE and BE, as a response with `charset=utf-16` carries it; text
 *   is always decoded as UTF-8, so its bytes would otherwise come through with NULs in between.
 */
const FORMS: Record<string, (secret: string, on: 'text' | 'bytes') => string[]> = {
  url: (secret, on) => {
    // A unit and its bytes: a character and its UTF-8 bytes (text), or one byte (bytes).
    const units: [string, number[]][] =
      on === 'text'
        ? [...secret].map((c) => [c, [...Buffer.from(c, 'utf8')]])
        : [...Buffer.from(secret, 'utf8')].map((b) => [String.fromCharCode(b), [b]]);
    const source = units
      .map(([unit, bytes]) => {
        const escaped = bytes.map((b) => `%${hexEither(b)}`).join('');
        return `(?:${literal(unit)}|${escaped}${unit === ' ' ? '|\\+' : ''})`;
      })
      .join('');
    return [source];
  },
  base64: (secret) => {
    const bytes = Buffer.from(secret, 'utf8');
    const determined = Math.floor((bytes.length * 8) / 6);
    // Whole (padded, then unpadded) before the determined characters alone: the first that matches wins.
    return [bytes.toString('base64'), bytes.toString('base64url')].flatMap((full) => {
      const bare = full.replace(/=+$/, '');
      return [...new Set([full, bare, bare.slice(0, determined)])].map(literal);
    });
  },
  utf16: (secret, on) => {
    if (on === 'text') return [];
    const le = Buffer.from(secret, 'utf16le');
    const be = Buffer.from(le).swap16();
    return [le, be].map((b) => literal(b.toString('latin1')));
  },
};

/** Secrets shorter than this are left alone: masking every "a" would wreck the record and hide nothing worth hiding. */
const MIN_SECRET_LENGTH = 4;

/** How deep `Scrubber.value` walks; deeper objects and arrays are replaced by "***". */
const MAX_DEPTH = 1_000;

/** A scrubber for the secrets of one request: what the step keeps goes through it. */
export interface Scrubber {
  /** `value` with every string inside it (keys included) scrubbed: "***" for every form of a secret. */
  value(value: unknown): unknown;
  /**
   * `bytes` scrubbed as bytes (a body the step stores as base64 is scrubbed before it is encoded,
   * and a text body before it is decoded); the same Buffer when nothing was found.
   */
  bytes(bytes: Buffer): Buffer;
}

const NOTHING: Scrubber = { value: (v) => v, bytes: (b) => b };

/** The scrubber for `secrets` (clear values: FORMS derives what else to look for). */
export function scrubber(secrets: readonly string[]): Scrubber {
  const list = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  );
  if (list.length === 0) return NOTHING;
  // Longer secrets first (sorted above): at one position, the first alternative that matches wins.
  const compile = (on: 'text' | 'bytes') =>
    new RegExp(list.flatMap((s) => Object.values(FORMS).flatMap((form) => form(s, on))).join('|'), 'g');
  const text = compile('text');
  // No form of a secret is shorter than the secret itself (its clear form): shorter strings are skipped.
  const shortest = list[list.length - 1]!.length;
  let bytes: RegExp | undefined;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return v.length < shortest ? v : v.replace(text, MASK);
    if (v === null || typeof v !== 'object') return v;
    // Masked whole rather than walked deeper (no real answer nests so deep): the stack stays
    // bounded, and nothing is passed on unchecked.
    if (depth > MAX_DEPTH) return MASK;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__') continue;
      out[walk(k, depth + 1) as string] = walk(x, depth + 1);
    }
    return out;
  };
  const scrubBytes = (b: Buffer): Buffer => {
    bytes ??= compile('bytes');
    const latin1 = b.toString('latin1');
    const out = latin1.replace(bytes, MASK);
    return out === latin1 ? b : Buffer.from(out, 'latin1');
  };
  return { value: (v) => walk(v, 0), bytes: scrubBytes };
}

/** `value` with every form of the secrets (FORMS) replaced by "***", in strings anywhere inside it. */
export function scrub(value: unknown, secrets: readonly string[]): unknown {
  return scrubber(secrets).value(value);
}

/** A hex digit pair matching either case: 0x2f → `2[fF]`. */
function hexEither(byte: number): string {
  return [...byte.toString(16).padStart(2, '0')]
    .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
    .join('');
}

/** `text` as a regular expression that matches it literally (every code unit but letters and digits escaped). */
function literal(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += /[A-Za-z0-9]/.test(text[i]!) ? text[i] : `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return out;
}
