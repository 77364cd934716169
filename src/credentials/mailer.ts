/**
 * The system's own mail (SPEC 11b: the link of an invitation), sent through the `smtp` credential
 * HOOKFLOW_MAILER_CREDENTIAL names (by id or name, looked up at each message, so a rotated or
 * re-created credential is used at once). The same pooled transports and network policy as
 * `email` steps (engine/mail.ts): an SMTP host on a private address needs
 * HOOKFLOW_ALLOW_PRIVATE_NETWORK=true. A message that cannot be sent is an answer, not an
 * exception: the caller says so and why (the invitation itself is kept).
 */
import { describeSmtpError, MailTransports, smtpSecrets, smtpSettings } from '../engine/mail.js';
import { scrub } from '../engine/credentials.js';
import type { NetworkPolicy } from '../engine/network.js';
import type { CredentialService } from './service.js';

/** How long one message may take, connecting included (the API call that sends it waits). */
const SEND_TIMEOUT_MS = 20_000;

export interface SystemMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export type MailResult = { sent: true; messageId: string } | { sent: false; error: string };

export class Mailer {
  readonly #credentials: Pick<CredentialService, 'smtp'>;
  readonly #ref: string;
  readonly #transports: MailTransports;

  constructor(deps: {
    credentials: Pick<CredentialService, 'smtp'>;
    credential: string;
    policy: NetworkPolicy;
  }) {
    this.#credentials = deps.credentials;
    this.#ref = deps.credential;
    this.#transports = new MailTransports(deps.policy);
  }

  /** What HOOKFLOW_MAILER_CREDENTIAL names (for logs and answers). */
  get credential(): string {
    return this.#ref;
  }

  async send(mail: SystemMail): Promise<MailResult> {
    const found = await this.#credentials.smtp(this.#ref);
    if ('error' in found)
      return { sent: false, error: `HOOKFLOW_MAILER_CREDENTIAL names no usable credential: ${found.error}` };
    const settings = smtpSettings(found.data);
    try {
      const transport = await this.#transports.transport(found.id, settings);
      const info = await transport.sendMail({
        from: settings.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      if ((info.rejected ?? []).length > 0)
        return { sent: false, error: `the SMTP server refused ${mail.to}: ${String(info.response ?? '')}` };
      return { sent: true, messageId: info.messageId };
    } catch (err) {
      const e = err as { name?: string };
      const why =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `${settings.host}:${settings.port} did not take the message within ${SEND_TIMEOUT_MS / 1000} s`
          : describeSmtpError(err);
      return { sent: false, error: String(scrub(why, smtpSecrets(settings))) };
    }
  }

  close(): void {
    this.#transports.close();
  }
}
