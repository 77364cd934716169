/**
 * `email` (SPEC 7e): sends a message through an `smtp` credential's server (nodemailer, one pooled
 * transport per credential: engine/mail.ts). Output `{messageId, accepted, rejected}`: the
 * Message-ID and the recipients the server took and refused.
 *
 * Fields: `to` (required), `cc`, `bcc`, `replyTo` — an address, `Name <address>`, a comma-separated
 * list, or an array of those; `subject`, `text`, `html`; `attachments`: file references (the
 * trigger's `files[]`, an `http` step's `file`), streamed from the store as the message is sent.
 * Every field may hold expressions (the address, subject and body fields `$secrets` too).
 *
 * Refusals: a reply of the server that refuses the login, the sender, every recipient or the
 * message fails the step with the reply's code and text ("550 5.1.1 … (RCPT TO)"). When it takes
 * the message for some recipients and refuses others, the message has gone out: the step fails
 * (`failOnRejected: false` lets it succeed), naming each refused recipient with its reply, and is
 * never retried (a retry would send the message again to those who have it).
 *
 * Retries: `retry` as on `http` (engine/retry.ts): `on` names `network` (no connection, a
 * connection lost, a timeout), `4xx` (a transient refusal: 421, 450, 451, 452 — the default with
 * `network`) and `5xx` (a permanent one; retried only when asked). Every attempt sends the same
 * Message-ID (`<executionId.hash@sender's domain>`, from the step's place in its execution), so a
 * message delivered twice after a lost answer can be told to be the same one.
 *
 * Timeouts: `timeoutMs` (default 60 s) bounds one attempt (waiting for a pooled connection,
 * connecting, sending); connecting and the server's greeting each also within 15 s.
 *
 * Secrets: the credential's password (and its AUTH form) is scrubbed from whatever the step
 * records; the record's `mail` shows the addresses, the subject and the attachments' names and
 * sizes, never the body.
 */
import { createHash } from 'node:crypto';
import Type from 'typebox';
import { scrubber } from '../credentials.js';
import { type FileRef, fileRefAt, openFile } from '../files.js';
import { type SmtpSettings, smtpSecrets, smtpSettings } from '../mail.js';
import { NetworkRefused } from '../network.js';
import { type Attempt, nextAttempt, RetrySchema, resumedAttempts, retryPolicy } from '../retry.js';
import { idempotencyKeyOf } from './http.js';
import { defineStep, Expr, type StepContext, type StepDetails, StepFailure } from './types.js';

const DEFAULT_TIMEOUT_MS = 60_000;
const RETRY_ON = ['network', '4xx', '5xx'] as const;
/** Transient refusals and lost connections; a 5xx is permanent, retried only when `on` names it. */
const DEFAULT_RETRY_ON = ['network', '4xx'] as const;
/** Recipients of one message, to, cc and bcc together. */
const MAX_RECIPIENTS = 500;
const RECIPIENT_FIELDS = ['to', 'cc', 'bcc'] as const;
const ADDRESS_FIELDS = ['to', 'cc', 'bcc', 'replyTo'] as const;
/** Attachments of one message. */
const MAX_ATTACHMENTS = 50;

/** An address, a comma-separated list, or an array of them; null (a missing value) is none. */
const Addresses = () =>
  Type.Union([
    Type.String({ maxLength: 100_000 }),
    Type.Array(Type.String({ maxLength: 2_000 }), { maxItems: MAX_RECIPIENTS }),
    Type.Null(),
  ]);

/** Text, or a number or boolean written as text; null is none. */
const Text = () => Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export interface EmailOutput {
  messageId: string;
  accepted: string[];
  rejected: string[];
}

/** One recipient the server refused, with its reply. */
interface Refused {
  recipient: string;
  reply: string;
}

export const emailStep = defineStep({
  type: 'email',
  description:
    'Send an email through an SMTP server (an smtp credential); the recipients it took are the output.',
  credentialTypes: ['smtp'],
  // SPEC 7e: an email step's fields may use $secrets (scrubbed from the record like the password).
  secretFields: ['/to', '/cc', '/bcc', '/replyTo', '/subject', '/text', '/html'],
  config: Type.Object(
    {
      credential: Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[0-9A-Za-z_-]+$',
        description: 'The id of an smtp credential (POST /api/v1/credentials): the server and the sender.',
      }),
      to: Addresses(),
      cc: Type.Optional(Addresses()),
      bcc: Type.Optional(Addresses()),
      replyTo: Type.Optional(Addresses()),
      subject: Type.Optional(Text()),
      text: Type.Optional(Text()),
      html: Type.Optional(Text()),
      attachments: Type.Optional(
        Expr(
          Type.Union(
            [Type.Array(Type.Unknown(), { maxItems: MAX_ATTACHMENTS }), Type.Object({}), Type.Null()],
            {
              description:
                "File references ({id, filename, mimeType, size, sha256}: $trigger.files, an http step's file), one or a list, sent as attachments streamed from the store.",
            },
          ),
        ),
      ),
      timeoutMs: Type.Optional(Expr(Type.Integer({ minimum: 1, maximum: 300_000 }))),
      failOnRejected: Type.Optional(Expr(Type.Boolean())),
      retry: Type.Optional(RetrySchema(RETRY_ON)),
    },
    { additionalProperties: false },
  ),
  async run(config, ctx) {
    const cred = ctx.credentials?.[config.credential];
    if (cred?.type !== 'smtp')
      throw new StepFailure(
        cred
          ? `Credential "${config.credential}" is a ${cred.type} credential, not an smtp one.`
          : `Credential "${config.credential}" does not exist (any more): this version names a credential that was deleted.`,
        { field: '/credential' },
      );
    const mail = ctx.mail;
    if (!mail) throw new StepFailure('Email cannot be sent here: this engine has no mail transports.');
    const settings = smtpSettings(cred.data);
    const scrub = scrubber(smtpSecrets(settings));

    const { default: addressparser } = await import('nodemailer/lib/addressparser');
    const addresses: Partial<Record<(typeof ADDRESS_FIELDS)[number], string[]>> = {};
    for (const field of ADDRESS_FIELDS) {
      const list = parseAddresses(addressparser, config[field], `/${field}`);
      if (list.length > 0) addresses[field] = list;
    }
    const recipients = RECIPIENT_FIELDS.reduce((n, f) => n + (addresses[f]?.length ?? 0), 0);
    if (recipients === 0)
      throw new StepFailure('The message has no recipient: to, cc and bcc are all empty.', { field: '/to' });
    if (recipients > MAX_RECIPIENTS)
      throw new StepFailure(
        `The message has ${recipients} recipients; at most ${MAX_RECIPIENTS} are sent at once.`,
        {
          field: '/to',
        },
      );
    const subject = optionalText(config.subject);
    if (subject !== undefined && /[\r\n]/.test(subject))
      throw new StepFailure('The subject contains a line break.', { field: '/subject' });

    const files = attachmentsOf(config.attachments);
    const messageId = messageIdOf(ctx, settings);
    const recorded = {
      from: settings.from,
      ...addresses,
      ...(subject !== undefined ? { subject } : {}),
      ...(files.length > 0
        ? { attachments: files.map((f) => ({ filename: f.filename, mimeType: f.mimeType, size: f.size })) }
        : {}),
    };
    const attempts: Attempt[] = resumedAttempts(ctx.resume?.state);
    const details = (reply?: string): StepDetails => ({
      mail: scrub.value(reply === undefined ? recorded : { ...recorded, reply }),
      attempts: [...attempts],
    });
    const policy = retryPolicy(config.retry, DEFAULT_RETRY_ON);
    const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const text = optionalText(config.text);
    const html = optionalText(config.html);

    for (;;) {
      const at = new Date().toISOString();
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let failure: SendFailure;
      try {
        const transport = await mail.transport(config.credential, settings);
        const info = await transport.sendMail({
          from: settings.from,
          ...addresses,
          ...(subject !== undefined ? { subject } : {}),
          ...(text !== undefined ? { text } : {}),
          ...(html !== undefined ? { html } : {}),
          ...(messageId !== undefined ? { messageId } : {}),
          // Opened afresh for each attempt: a stream is read once. Read part by part from the
          // store as the message is written to the server, never whole in memory.
          ...(files.length > 0
            ? {
                attachments: files.map((f, i) => ({
                  filename: f.filename,
                  contentType: f.mimeType,
                  content: openFile(ctx.files, f, `/attachments/${i}`),
                })),
              }
            : {}),
          signal,
          // Only what the step hands over is sent: no file path or URL in the message is read.
          disableFileAccess: true,
          disableUrlAccess: true,
        });
        attempts.push({ at, status: replyCode(info.response) ?? 250 });
        const output: EmailOutput = {
          messageId: info.messageId,
          accepted: (info.accepted ?? []).map(String),
          rejected: (info.rejected ?? []).map(String),
        };
        const refused = refusedOf(info);
        if (output.rejected.length > 0 && (config.failOnRejected ?? true)) {
          throw new StepFailure(
            String(
              scrub.value(
                `The message was sent to ${listed(output.accepted)}, but the SMTP server refused ${refused.map((r) => `${r.recipient} (${r.reply})`).join(', ')}. Set failOnRejected: false to go on when some recipients are refused.`,
              ),
            ),
            { output, details: { ...details(info.response), refused: scrub.value(refused) } },
          );
        }
        return {
          output,
          details:
            refused.length > 0
              ? { ...details(info.response), refused: scrub.value(refused) }
              : details(info.response),
        };
      } catch (err) {
        if (err instanceof StepFailure) throw err;
        // A file that cannot be read (deleted by retention, a made-up reference) fails as itself.
        const unreadable = findCause(err, StepFailure);
        if (unreadable)
          throw new StepFailure(unreadable.message, { field: '/attachments', details: details() });
        failure = classify(err, ctx, timeoutMs, settings);
      }
      const message = String(scrub.value(failure.message));
      attempts.push({ at, error: message });
      if (failure.retryAs !== undefined && policy.on.has(failure.retryAs)) {
        const next = await nextAttempt(ctx, policy, attempts);
        if (next === 'again') continue;
        if (next) return { output: null, park: next.park, details: details() };
      }
      const tried = attempts.length > 1 ? ` (attempt ${attempts.length} of ${policy.attempts})` : '';
      throw new StepFailure(`${message}${tried}`, {
        ...(failure.field ? { field: failure.field } : {}),
        ...(failure.output ? { output: failure.output } : {}),
        details: {
          ...details(),
          ...(failure.reply ? { reply: scrub.value(failure.reply) } : {}),
          ...(failure.refused ? { refused: scrub.value(failure.refused) } : {}),
        },
      });
    }
  },
});

interface SendFailure {
  message: string;
  /** What `retry.on` entry retries it, if any. */
  retryAs?: 'network' | '4xx' | '5xx';
  field?: string;
  /** The server's reply: `{code, text, command}`. */
  reply?: { code: number; text: string; command?: string };
  refused?: Refused[];
  output?: EmailOutput;
}

/** What went wrong in one attempt, in words, and whether `on` may retry it. */
function classify(err: unknown, ctx: StepContext, timeoutMs: number, s: SmtpSettings): SendFailure {
  const server = `${s.host}:${s.port}`;
  if (ctx.signal.aborted)
    return { message: `Sending through ${server} was cut off: the execution ran out of time.` };
  const e = err as {
    name?: string;
    message?: string;
    code?: string;
    responseCode?: number;
    response?: string;
    command?: string;
    rejected?: unknown[];
    rejectedErrors?: { recipient?: string; response?: string; message?: string }[];
  };
  const refused = findCause(err, NetworkRefused);
  if (refused) return { message: refused.message, field: '/credential' };
  if (e.name === 'AbortError' || e.code === 'EABORT' || e.name === 'TimeoutError')
    return {
      message: `${server} did not take the message within ${timeoutMs} ms.`,
      retryAs: 'network',
      field: '/timeoutMs',
    };
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) {
    const code = e.responseCode;
    const text = (e.response ?? '').trim() || String(code);
    const command = e.command ? ` (${e.command})` : '';
    const retryAs = code < 500 ? ('4xx' as const) : ('5xx' as const);
    const reply = { code, text, ...(e.command ? { command: e.command } : {}) };
    if (e.code === 'EAUTH')
      return {
        message: `The SMTP server refused the login: ${text}${command}.`,
        retryAs,
        reply,
        field: '/credential',
      };
    if (e.code === 'EENVELOPE' && Array.isArray(e.rejectedErrors) && e.rejectedErrors.length > 0) {
      const list = e.rejectedErrors.map((r) => ({
        recipient: String(r.recipient ?? ''),
        reply: String(r.response ?? r.message ?? '').trim(),
      }));
      return {
        message: `The SMTP server refused every recipient: ${list.map((r) => `${r.recipient} (${r.reply})`).join(', ')}.`,
        retryAs,
        reply,
        refused: list,
        output: { messageId: '', accepted: [], rejected: list.map((r) => r.recipient) },
      };
    }
    return { message: `The SMTP server refused the message: ${text}${command}.`, retryAs, reply };
  }
  const code = e.code ? ` (${e.code})` : '';
  return {
    message: `Sending through ${server} failed: ${e.message ?? String(err)}${code}.`,
    retryAs: 'network',
  };
}

type AddressParser = typeof import('nodemailer/lib/addressparser').default;

/** The addresses in a field (as `Name <address>` or `address`), each checked; a StepFailure names the bad one. */
function parseAddresses(parse: AddressParser, value: unknown, field: string): string[] {
  if (value === undefined || value === null || value === '') return [];
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  items.forEach((item, i) => {
    const at = Array.isArray(value) ? `${field}/${i}` : field;
    if (item === null || item === undefined || item === '') return;
    if (typeof item !== 'string')
      throw new StepFailure(`${at} is not an email address (it is ${JSON.stringify(item)?.slice(0, 100)}).`, {
        field: at,
      });
    if (/[\r\n\0]/.test(item)) throw new StepFailure(`${at} contains a line break.`, { field: at });
    for (const parsed of parse(item, { flatten: true })) {
      const address = parsed.address ?? '';
      if (!/^[^\s@]+@[^\s@]+$/.test(address))
        throw new StepFailure(`"${item.slice(0, 200)}" in ${at} is not an email address.`, { field: at });
      out.push(parsed.name ? `${JSON.stringify(parsed.name)} <${address}>` : address);
    }
  });
  return out;
}

/** The attachments as file references: a list, one reference, or none; a StepFailure names a bad one. */
function attachmentsOf(value: unknown): FileRef[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return [fileRefAt(value, '/attachments')];
  if (value.length > MAX_ATTACHMENTS)
    throw new StepFailure(`A message takes at most ${MAX_ATTACHMENTS} attachments.`, {
      field: '/attachments',
    });
  return value.map((v, i) => fileRefAt(v, `/attachments/${i}`));
}

function optionalText(v: string | number | boolean | null | undefined): string | undefined {
  return v === undefined || v === null ? undefined : String(v);
}

/**
 * `<executionId.hash@domain>`: the same on every attempt of this step in its execution (its
 * idempotency key, hashed), the domain the sender's. Undefined when the engine did not say where
 * the step runs (nodemailer then makes one).
 */
function messageIdOf(ctx: StepContext, s: SmtpSettings): string | undefined {
  const key = idempotencyKeyOf(ctx);
  const executionId = ctx.scope?.execution.id;
  if (key === undefined || executionId === undefined) return undefined;
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(s.from)?.[1] ?? 'hookflow.invalid';
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 20);
  return `<${executionId.replace(/[^A-Za-z0-9-]/g, '')}.${hash}@${domain}>`;
}

/** The reply code at the start of a server's reply ("250 2.0.0 OK" → 250). */
function replyCode(response: string | undefined): number | undefined {
  const m = /^(\d{3})/.exec(response ?? '');
  return m ? Number(m[1]) : undefined;
}

function refusedOf(info: {
  rejectedErrors?: { recipient?: string; response?: string; message?: string }[];
}): Refused[] {
  return (info.rejectedErrors ?? []).map((r) => ({
    recipient: String(r.recipient ?? ''),
    reply: String(r.response ?? r.message ?? '').trim(),
  }));
}

function listed(list: string[]): string {
  return list.length === 0 ? 'nobody' : list.join(', ');
}

function findCause<T>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let e = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof type) return e;
  return undefined;
}
