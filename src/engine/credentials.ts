/**
 * Credentials at run time (SPEC 7c). The executor unseals the credentials a workflow version names
 * and passes them with the run (RunContext.credentials, across to the engine thread); an `http`
 * step with `"credential": "<id>"` applies one to its request here. Clear values stay in the run's
 * memory: what the step records of its request shows them as "***", and `scrub` takes them out of
 * anything else it records (an API that echoes the key back in an error body, say).
 */
/** What records show instead of a secret (as workflows/model.ts MASK; the engine imports no workflow module). */
const MASK = '***';

export type CredentialType = 'bearer' | 'header' | 'basic' | 'query';

export interface RunCredential {
  type: CredentialType;
  /** The type's fields, in clear. */
  data: Record<string, string>;
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
  const d = cred.data;
  switch (cred.type) {
    case 'bearer': {
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
      return {
        query: d.name ?? '',
        // As sent (form-encoded in the URL) and as a server might echo it (decoded).
        secrets: [d.value ?? '', new URLSearchParams({ v: d.value ?? '' }).toString().slice(2)],
      };
    }
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
 * `value` with every occurrence of the secrets replaced by "***" (strings anywhere inside it).
 * Secrets shorter than 4 characters are left alone: masking every "a" would wreck the record and
 * hide nothing worth hiding.
 */
export function scrub(value: unknown, secrets: readonly string[]): unknown {
  const list = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return value;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      let out = v;
      for (const s of list) if (out.includes(s)) out = out.split(s).join(MASK);
      return out;
    }
    if (depth > 64 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__') continue;
      out[walk(k, depth + 1) as string] = walk(x, depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}
