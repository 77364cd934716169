/**
 * The `email` step and the `smtp` credential (SPEC 7e) over HTTP, against a real SMTP server
 * (`smtp-server`) started here: the message as received — envelope, headers, text and HTML parts —
 * checked byte for byte; the server's refusals (a recipient, every recipient, the message, the
 * login) fail the step with the reply's code and text; a transient refusal is retried; the
 * password appears in no answer and no record; the SMTP host is held to the same private-network
 * policy as `http` steps.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { leaves, parseMime, type SmtpTestServer, startSmtpServer } from '../helpers/smtp.js';
import { finishedExecution } from './int-helpers.js';

const PASSWORD = 'smtp-pa55word-never-shown';
let smtp: SmtpTestServer;
let server: TestServer;
let credentialId: string;

beforeAll(async () => {
  smtp = await startSmtpServer({ auth: { user: 'mailer', pass: PASSWORD } });
  server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  const res = await server.api('POST', '/api/v1/credentials', {
    name: 'Mail relay',
    type: 'smtp',
    data: {
      host: smtp.host,
      port: String(smtp.port),
      security: 'none',
      username: 'mailer',
      password: PASSWORD,
      from: 'Shop Receipts <receipts@shop.example>',
    },
  });
  expect(res.status).toBe(201);
  credentialId = res.body.id;
});

afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

let seq = 0;
/** An active workflow `webhook → email` (step fields merged in) and a function that fires it. */
async function emailWorkflow(fields: Record<string, unknown>, credential = credentialId) {
  const path = `mail-${++seq}`;
  await createActiveWorkflow(server, {
    name: path,
    trigger: { path },
    steps: [{ name: 'send', type: 'email', credential, ...fields }],
  });
  return async (body: unknown) => {
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const { executionId } = (await res.json()) as { executionId: string };
    return finishedExecution(server, executionId);
  };
}

describe('smtp credential', () => {
  it('is answered with every value as ***, the port taken as a number', async () => {
    const res = await server.api('GET', `/api/v1/credentials/${credentialId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: 'smtp',
      data: { host: '***', port: '***', security: '***', username: '***', password: '***', from: '***' },
    });
    expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
  });

  it('is validated: a security mode it does not know, a missing from, a port out of range', async () => {
    const res = await server.api('POST', '/api/v1/credentials', {
      name: 'bad',
      type: 'smtp',
      data: { host: 'smtp.example.com', port: 70000, security: 'ssl' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const fields = (res.body.details ?? res.body.fields ?? []).map((f: { field: string }) => f.field);
    const text = JSON.stringify(res.body);
    for (const f of ['/data/port', '/data/security', '/data/from'])
      expect(fields.length ? fields : text).toContain(f);
  });

  it('an email step naming a credential of another type is refused on save', async () => {
    const bearer = await server.api('POST', '/api/v1/credentials', {
      name: 'api',
      type: 'bearer',
      data: { token: 'tok-123456' },
    });
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'wrong type',
      trigger: { path: 'wrong-type' },
      steps: [{ name: 'send', type: 'email', credential: bearer.body.id, to: 'a@example.com' }],
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('/steps/0/credential');
    expect(JSON.stringify(res.body)).toContain('takes smtp');
  });
});

describe('email step', () => {
  it('sends the message: envelope, headers, text and HTML as received, byte for byte', async () => {
    const fire = await emailWorkflow({
      to: '{{ body.customer.email }}',
      cc: ['{{ body.customer.manager }}'],
      bcc: 'Accounting <books@shop.example>',
      replyTo: 'support@shop.example',
      subject: 'Receipt for {{ body.amount / 100 }} € — order {{ body.order }}',
      text: 'Thank you, {{ body.customer.name }}!\nPaid: {{ body.amount / 100 }} EUR.',
      html: '<p>Thank you, <b>{{ body.customer.name }}</b>!</p><p>Ünïcödé ✓</p>',
    });
    const before = smtp.received.length;
    const execution = await fire({
      order: 'A-1001',
      amount: 4250,
      customer: { name: 'Zoë', email: 'zoe@customer.example', manager: 'Boss <boss@customer.example>' },
    });
    expect(execution.status).toBe('succeeded');
    const step = execution.steps[0];
    expect(step.output).toEqual({
      messageId: expect.stringMatching(/^<.+@shop\.example>$/),
      accepted: ['zoe@customer.example', 'boss@customer.example', 'books@shop.example'],
      rejected: [],
    });
    expect(step.mail).toMatchObject({
      from: 'Shop Receipts <receipts@shop.example>',
      to: ['zoe@customer.example'],
      cc: ['"Boss" <boss@customer.example>'],
      bcc: ['"Accounting" <books@shop.example>'],
      subject: 'Receipt for 42.5 € — order A-1001',
      reply: expect.stringMatching(/^250 /),
    });
    expect(step.attempts).toEqual([{ at: expect.any(String), status: 250 }]);

    expect(smtp.received.length).toBe(before + 1);
    const mail = smtp.received.at(-1)!;
    expect(mail.user).toBe('mailer');
    expect(mail.from).toBe('receipts@shop.example');
    expect(mail.to).toEqual(['zoe@customer.example', 'boss@customer.example', 'books@shop.example']);
    const message = parseMime(mail.raw);
    expect(message.headers.get('from')).toBe('Shop Receipts <receipts@shop.example>');
    expect(message.headers.get('to')).toBe('zoe@customer.example');
    expect(message.headers.get('cc')).toBe('Boss <boss@customer.example>');
    expect(message.headers.get('reply-to')).toBe('support@shop.example');
    expect(message.headers.has('bcc')).toBe(false);
    expect(message.headers.get('message-id')).toBe(step.output.messageId);
    // Non-ASCII subjects travel as RFC 2047 encoded words.
    const subject = message.headers.get('subject')!;
    const decoded = subject.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=\s*/gi, (_, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : Buffer.from(
            data
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          ).toString('utf8'),
    );
    expect(decoded).toBe('Receipt for 42.5 € — order A-1001');
    const parts = leaves(message);
    const text = parts.find((p) => p.headers.get('content-type')?.startsWith('text/plain'))!;
    const html = parts.find((p) => p.headers.get('content-type')?.startsWith('text/html'))!;
    expect(text.body.toString('utf8').replace(/\r\n/g, '\n')).toBe('Thank you, Zoë!\nPaid: 42.5 EUR.');
    expect(html.body.toString('utf8')).toBe('<p>Thank you, <b>Zoë</b>!</p><p>Ünïcödé ✓</p>');

    // The password is in no record.
    const record = await server.api('GET', `/api/v1/executions/${execution.id}`);
    expect(JSON.stringify(record.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(record.body)).not.toContain(Buffer.from(PASSWORD).toString('base64').slice(0, 12));
  });

  it('attaches files uploaded to the trigger as multipart, byte for byte, streamed from the store', async () => {
    const path = `mail-${++seq}`;
    await createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [
        {
          name: 'send',
          type: 'email',
          credential: credentialId,
          to: 'files@customer.example',
          subject: 'Your documents',
          text: 'Attached: {{ $join(files.filename, ", ") }}',
          attachments: '{{ $trigger.files }}',
        },
        {
          name: 'again',
          type: 'email',
          credential: credentialId,
          to: 'files@customer.example',
          subject: 'Just the first',
          attachments: ['{{ $trigger.files[0] }}'],
        },
      ],
    });
    // 1.5 MiB of random bytes: stored in parts (over 1 MiB), every byte value, base64 in the mail.
    const pdf = randomBytes(1536 * 1024);
    const csv = Buffer.from('id;amount\r\n1;42,50 €\r\n', 'utf8');
    const form = new FormData();
    form.append('note', 'two files');
    form.append('receipt', new Blob([pdf], { type: 'application/pdf' }), 'receipt 2026-11.pdf');
    form.append('lines', new Blob([csv], { type: 'text/csv' }), 'lines.csv');
    const before = smtp.received.length;
    const res = await fetch(`${server.url}/webhook/${path}`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const { executionId } = (await res.json()) as { executionId: string };
    const execution = await finishedExecution(server, executionId, 30_000);
    expect(execution.status).toBe('succeeded');
    expect(execution.steps[0].mail.attachments).toEqual([
      { filename: 'receipt 2026-11.pdf', mimeType: 'application/pdf', size: pdf.length },
      { filename: 'lines.csv', mimeType: 'text/csv', size: csv.length },
    ]);
    // The record holds references, never the bytes.
    const record = await server.api('GET', `/api/v1/executions/${executionId}`);
    expect(JSON.stringify(record.body).length).toBeLessThan(100_000);

    expect(smtp.received.length).toBe(before + 2);
    const [all, first] = smtp.received.slice(-2).map((m) => leaves(parseMime(m.raw)));
    const attachment = (parts: typeof all, name: string) =>
      parts!.find((p) => (p.headers.get('content-disposition') ?? '').includes(name))!;
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const gotPdf = attachment(all, 'receipt 2026-11.pdf');
    expect(gotPdf.headers.get('content-type')).toMatch(/^application\/pdf/);
    expect(gotPdf.headers.get('content-disposition')).toMatch(/^attachment; filename="receipt 2026-11.pdf"/);
    expect(gotPdf.body.length).toBe(pdf.length);
    expect(sha(gotPdf.body)).toBe(sha(pdf));
    const gotCsv = attachment(all, 'lines.csv');
    expect(gotCsv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(gotCsv.body.equals(csv)).toBe(true);
    const text = all!.find((p) => p.headers.get('content-type')?.startsWith('text/plain'))!;
    expect(text.body.toString('utf8')).toBe('Attached: receipt 2026-11.pdf, lines.csv');
    expect(sha(attachment(first, 'receipt 2026-11.pdf').body)).toBe(sha(pdf));
    expect(first!.some((p) => (p.headers.get('content-disposition') ?? '').includes('lines.csv'))).toBe(
      false,
    );
  });

  it('an attachment that is not a file reference fails the step naming it', async () => {
    const fire = await emailWorkflow({
      to: 'x@customer.example',
      text: 'x',
      attachments: ['{{ body.file }}'],
    });
    const execution = await fire({ file: { id: 'nope', filename: 'a.txt' } });
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain('/attachments/0 is not a file reference');
  });

  it('a reference to a file that is not stored fails the step as such, not retried as a network error', async () => {
    const fire = await emailWorkflow({
      to: 'x@customer.example',
      text: 'x',
      attachments: '{{ body.file }}',
      retry: { attempts: 3, backoffMs: 20 },
    });
    const execution = await fire({
      file: {
        id: 'no-such-file',
        filename: 'gone.pdf',
        mimeType: 'application/pdf',
        size: 10,
        sha256: 'a'.repeat(64),
      },
    });
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain('gone.pdf');
    expect(execution.steps[0].attempts ?? []).toHaveLength(0);
  });

  it('a refused recipient fails the step with the reply code and text', async () => {
    smtp.refuseRecipient.set('nobody@customer.example', {
      code: 550,
      text: '5.1.1 <nobody@customer.example>: Recipient address rejected: User unknown',
    });
    const fire = await emailWorkflow({ to: '{{ body.to }}', subject: 'Hello', text: 'Hi' });
    const before = smtp.received.length;
    const execution = await fire({ to: 'nobody@customer.example' });
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain(
      '550 5.1.1 <nobody@customer.example>: Recipient address rejected: User unknown',
    );
    const step = execution.steps[0];
    expect(step.status).toBe('failed');
    expect(step.output).toEqual({ messageId: '', accepted: [], rejected: ['nobody@customer.example'] });
    expect(step.reply).toMatchObject({ code: 550 });
    expect(smtp.received.length).toBe(before);
  });

  it('some recipients refused: the step fails naming them, unless failOnRejected is false', async () => {
    smtp.refuseRecipient.set('gone@customer.example', { code: 550, text: '5.1.1 Mailbox unavailable' });
    const strict = await emailWorkflow({ to: ['ok@customer.example', 'gone@customer.example'], text: 'x' });
    const failed = await strict({});
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('sent to ok@customer.example');
    expect(failed.error.message).toContain('gone@customer.example (550 5.1.1 Mailbox unavailable)');
    expect(failed.steps[0].output).toMatchObject({
      accepted: ['ok@customer.example'],
      rejected: ['gone@customer.example'],
    });

    const lenient = await emailWorkflow({
      to: ['ok@customer.example', 'gone@customer.example'],
      text: 'x',
      failOnRejected: false,
    });
    const done = await lenient({});
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].output).toMatchObject({
      accepted: ['ok@customer.example'],
      rejected: ['gone@customer.example'],
    });
    expect(done.steps[0].refused).toEqual([
      { recipient: 'gone@customer.example', reply: '550 5.1.1 Mailbox unavailable' },
    ]);
  });

  it('a message refused after DATA fails the step with the reply code and text', async () => {
    smtp.refuseData.push({ code: 554, text: '5.7.1 Message rejected as spam' });
    const fire = await emailWorkflow({ to: 'x@customer.example', subject: 'Buy now', text: 'spam' });
    const execution = await fire({});
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain('554 5.7.1 Message rejected as spam');
    expect(execution.steps[0].reply).toMatchObject({ code: 554, text: '554 5.7.1 Message rejected as spam' });
  });

  it('a transient refusal (451) is retried, and the message arrives once with the same Message-ID', async () => {
    smtp.refuseData.push({ code: 451, text: '4.3.0 Try again later' });
    const fire = await emailWorkflow({
      to: 'retry@customer.example',
      subject: 'Second time lucky',
      text: 'x',
      retry: { attempts: 3, backoffMs: 50 },
    });
    const before = smtp.received.length;
    const execution = await fire({});
    expect(execution.status).toBe('succeeded');
    const step = execution.steps[0];
    expect(step.attempts).toEqual([
      { at: expect.any(String), error: expect.stringContaining('451 4.3.0 Try again later') },
      { at: expect.any(String), status: 250 },
    ]);
    expect(smtp.received.length).toBe(before + 1);
    expect(parseMime(smtp.received.at(-1)!.raw).headers.get('message-id')).toBe(step.output.messageId);
  });

  it('a permanent refusal is not retried unless `on` names 5xx', async () => {
    smtp.refuseData.push({ code: 550, text: '5.7.1 No' });
    const fire = await emailWorkflow({
      to: 'p@customer.example',
      text: 'x',
      retry: { attempts: 3, backoffMs: 50 },
    });
    const execution = await fire({});
    expect(execution.status).toBe('failed');
    expect(execution.steps[0].attempts).toHaveLength(1);
  });

  it('a login the server refuses fails with its reply; the password is in no record', async () => {
    const wrong = await server.api('POST', '/api/v1/credentials', {
      name: 'wrong password',
      type: 'smtp',
      data: {
        host: smtp.host,
        port: smtp.port,
        security: 'none',
        username: 'mailer',
        password: 'wrong-password-xyz',
        from: 'a@shop.example',
      },
    });
    const fire = await emailWorkflow({ to: 'y@customer.example', text: 'x' }, wrong.body.id);
    const execution = await fire({});
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain('535 5.7.8 Authentication credentials invalid');
    expect(JSON.stringify(execution)).not.toContain('wrong-password-xyz');
  });

  it('rotating the credential is used at once (the old pool is closed)', async () => {
    const other = await startSmtpServer();
    try {
      const fire = await emailWorkflow({ to: 'rotated@customer.example', text: 'x' });
      expect((await fire({})).status).toBe('succeeded');
      const res = await server.api('PATCH', `/api/v1/credentials/${credentialId}`, {
        data: { port: other.port, username: '', password: '' },
      });
      expect(res.status).toBe(200);
      const execution = await fire({});
      expect(execution.status).toBe('succeeded');
      expect(other.received.map((m) => m.to)).toEqual([['rotated@customer.example']]);
    } finally {
      await server.api('PATCH', `/api/v1/credentials/${credentialId}`, {
        data: { port: smtp.port, username: 'mailer', password: PASSWORD },
      });
      await other.close();
    }
  });

  it('a server that is down fails the step as a network error (retried when asked)', async () => {
    const down = await startSmtpServer();
    const port = down.port;
    await down.close();
    const cred = await server.api('POST', '/api/v1/credentials', {
      name: 'down',
      type: 'smtp',
      data: { host: '127.0.0.1', port, security: 'none', from: 'a@shop.example' },
    });
    const fire = await emailWorkflow(
      { to: 'z@customer.example', text: 'x', retry: { attempts: 2, backoffMs: 20 } },
      cred.body.id,
    );
    const execution = await fire({});
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toContain('ECONNREFUSED');
    expect(execution.steps[0].attempts).toHaveLength(2);
  });
});

describe('email step without HOOKFLOW_ALLOW_PRIVATE_NETWORK', () => {
  it('refuses an SMTP host on a loopback address, as http steps do', async () => {
    const guarded = await startTestServer();
    try {
      const cred = await guarded.api('POST', '/api/v1/credentials', {
        name: 'local',
        type: 'smtp',
        data: { host: 'localhost', port: smtp.port, security: 'none', from: 'a@shop.example' },
      });
      const path = 'guarded-mail';
      await createActiveWorkflow(guarded, {
        name: path,
        trigger: { path },
        steps: [{ name: 'send', type: 'email', credential: cred.body.id, to: 'a@b.example', text: 'x' }],
      });
      const before = smtp.connections;
      const res = await fetch(`${guarded.url}/webhook/${path}`, { method: 'POST' });
      const { executionId } = (await res.json()) as { executionId: string };
      const execution = await finishedExecution(guarded, executionId);
      expect(execution.status).toBe('failed');
      expect(execution.error.message).toContain('a loopback address');
      expect(execution.error.message).toContain('HOOKFLOW_ALLOW_PRIVATE_NETWORK');
      expect(smtp.connections).toBe(before);
    } finally {
      await guarded.close();
    }
  });
});
