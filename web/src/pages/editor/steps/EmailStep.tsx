import { ExpressionInput } from '../../../components/ExpressionInput';
import {
  EMAIL_RETRY_DEFAULT,
  EMAIL_RETRY_ON,
  type EmailDraft,
  type EmailFields as Message,
} from '../../../lib/steps/email';
import { textToBody } from '../../../lib/steps/values';
import { CredentialPicker } from './CredentialPicker';
import { RetryFields } from './RetryFields';
import { type Props, problemAt } from './shared';

type TextKey = Exclude<keyof Message, 'failOnRejected'>;

const RETRY_LABELS: Record<(typeof EMAIL_RETRY_ON)[number], string> = {
  network: 'a network error (no connection, no answer)',
  '4xx': 'a transient refusal (4xx: try again later)',
  '5xx': 'a permanent refusal (5xx)',
};

/** The email step's form (SPEC 7e): every text field with the field picker, the SMTP credential, retry. */
export function EmailFields({ step, at, onChange, context, problems }: Props<EmailDraft>) {
  const input = (
    key: TextKey,
    label: string,
    opts: { multiline?: boolean; placeholder?: string; required?: boolean; json?: boolean } = {},
  ) => (
    <ExpressionInput
      label={label}
      value={step[key]}
      onChange={(v) => onChange({ [key]: v })}
      fields={context.fields}
      scope={context.scope}
      multiline={opts.multiline}
      placeholder={opts.placeholder}
      required={opts.required}
      serverError={problemAt(problems, `${at}/${key}`)}
      field={`${at}/${key}`}
      toValue={opts.json ? textToBody : undefined}
    />
  );
  return (
    <>
      <CredentialPicker
        value={step.credential}
        onChange={(credential) => onChange({ credential })}
        field={`${at}/credential`}
        error={problemAt(problems, `${at}/credential`)}
        types={['smtp']}
      />
      {input('to', 'To', { placeholder: '{{ body.customer.email }}', required: true })}
      {input('cc', 'Cc', { placeholder: 'Name <address>, another@example.com' })}
      {input('bcc', 'Bcc')}
      {input('replyTo', 'Reply to')}
      {input('subject', 'Subject', { placeholder: 'Your receipt for order {{ body.id }}' })}
      {input('text', 'Text', { multiline: true, placeholder: 'Thank you, {{ body.customer.name }}!' })}
      {input('html', 'HTML', {
        multiline: true,
        placeholder: '<p>Thank you, <b>{{ body.customer.name }}</b>!</p>',
      })}
      {input('attachments', 'Attachments (file references)', {
        placeholder: '{{ $trigger.files }}',
        json: true,
      })}
      <p className="help">
        Files uploaded to the webhook (<code>{'{{ $trigger.files }}'}</code>), or an http step's{' '}
        <code>file</code>; they are read from the store as the message is sent.
      </p>
      <ExpressionInput
        label="Timeout (ms)"
        value={step.timeoutMs}
        onChange={(v) => onChange({ timeoutMs: v })}
        fields={context.fields}
        scope={context.scope}
        placeholder="60000"
        serverError={problemAt(problems, `${at}/timeoutMs`)}
        field={`${at}/timeoutMs`}
      />
      <label className="check">
        <input
          type="checkbox"
          checked={step.failOnRejected}
          onChange={(e) => onChange({ failOnRejected: e.target.checked })}
        />
        Fail the run when the server refuses a recipient
      </label>
      <RetryFields
        step={step}
        at={at}
        onChange={onChange}
        problems={problems}
        options={EMAIL_RETRY_ON.map((o) => ({ value: o, label: RETRY_LABELS[o] }))}
        defaults={EMAIL_RETRY_DEFAULT}
        help="Pauses double each time (with jitter). A pause of a second or more parks the execution as waiting instead of holding a worker. Every attempt sends the same Message-ID."
      />
    </>
  );
}
