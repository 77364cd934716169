/**
 * Invitation links by mail (SPEC 11b): with HOOKFLOW_MAILER_CREDENTIAL naming an smtp credential,
 * `POST /members/invitations` also mails the link, received by a real SMTP server (`smtp-server`)
 * started here, and the link in the mail signs the person in. When the mail cannot be sent (the
 * server is down, the credential is missing) the invitation is still created and answered with
 * its link, the answer and the log saying why the mail was not sent.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { leaves, parseMime, type SmtpTestServer, startSmtpServer } from '../helpers/smtp.js';
import { call, PASSWORD } from '../helpers/team.js';

const SMTP_PASSWORD = 'mailer-secret-4711';
let smtp: SmtpTestServer;
let server: TestServer;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  smtp = await startSmtpServer({ auth: { user: 'hookflow', pass: SMTP_PASSWORD } });
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        logLines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    }),
  );
  // Named before it exists: it is looked up at each invitation.
  server = await startTestServer({
    env: { HOOKFLOW_MAILER_CREDENTIAL: 'Team mail', HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
    log,
  });
});

afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const invite = (email: string, role = 'editor') =>
  server.api('POST', '/api/v1/members/invitations', { email, role });

describe('invitation mail', () => {
  it('before the credential exists: the invitation is made, the answer says the mail was not sent', async () => {
    const res = await invite('early@example.com');
    expect(res.status).toBe(201);
    expect(res.body.inviteUrl).toMatch(/^http:\/\/hookflow\.test\/invite\//);
    expect(res.body.mail).toEqual({
      sent: false,
      to: 'early@example.com',
      error: expect.stringContaining('no credential has the id or name "Team mail"'),
    });
  });

  it('mails the link, which signs the invited person in', async () => {
    const cred = await server.api('POST', '/api/v1/credentials', {
      name: 'Team mail',
      type: 'smtp',
      data: {
        host: smtp.host,
        port: smtp.port,
        security: 'none',
        username: 'hookflow',
        password: SMTP_PASSWORD,
        from: 'hookflow <hookflow@team.example>',
      },
    });
    expect(cred.status).toBe(201);
    const before = smtp.received.length;
    const res = await invite('Ada@Example.com', 'viewer');
    expect(res.status).toBe(201);
    expect(res.body.mail).toEqual({ sent: true, to: 'ada@example.com' });

    expect(smtp.received.length).toBe(before + 1);
    const mail = smtp.received.at(-1)!;
    expect(mail.to).toEqual(['ada@example.com']);
    expect(mail.from).toBe('hookflow@team.example');
    const message = parseMime(mail.raw);
    expect(message.headers.get('subject')).toBe('You are invited to hookflow');
    expect(message.headers.get('to')).toBe('ada@example.com');
    const text = leaves(message)
      .find((p) => p.headers.get('content-type')?.startsWith('text/plain'))!
      .body.toString('utf8');
    expect(text).toContain(res.body.inviteUrl);
    expect(text).toContain('as a viewer');
    const html = leaves(message)
      .find((p) => p.headers.get('content-type')?.startsWith('text/html'))!
      .body.toString('utf8');
    expect(html).toContain(`href="${res.body.inviteUrl}"`);

    // The link as mailed works.
    const linkInMail = /http:\/\/hookflow\.test\/invite\/[A-Za-z0-9_-]+/.exec(text)![0];
    const token = new URL(linkInMail).pathname.split('/').at(-1)!;
    const accepted = await call(server, 'POST', '/api/v1/members/invitations/accept', {
      token,
      password: PASSWORD,
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.user).toMatchObject({ email: 'ada@example.com', role: 'viewer' });
    expect(logLines.some((l) => l.msg === 'invitation mailed' && l.invitationId === res.body.id)).toBe(true);
  });

  it('the SMTP server down: the invitation is still created and listed, the answer and the log say why', async () => {
    const down = await startSmtpServer();
    const port = down.port;
    await down.close();
    const creds = await server.api('GET', '/api/v1/credentials');
    const id = creds.body.items.find((c: { name: string }) => c.name === 'Team mail').id;
    expect((await server.api('PATCH', `/api/v1/credentials/${id}`, { data: { port } })).status).toBe(200);
    try {
      const res = await invite('grace@example.com', 'admin');
      expect(res.status).toBe(201);
      expect(res.body.inviteUrl).toMatch(/^http:\/\/hookflow\.test\/invite\//);
      expect(res.body.mail).toEqual({
        sent: false,
        to: 'grace@example.com',
        error: expect.stringContaining('ECONNREFUSED'),
      });
      const pending = await server.api('GET', '/api/v1/members/invitations');
      expect(pending.body.items).toContainEqual(
        expect.objectContaining({ id: res.body.id, email: 'grace@example.com' }),
      );
      const warned = logLines.find(
        (l) => l.msg === 'invitation mail not sent' && l.invitationId === res.body.id,
      );
      expect(warned?.reason).toEqual(expect.stringContaining('ECONNREFUSED'));
      // The link shown to copy still works.
      const token = new URL(res.body.inviteUrl).pathname.split('/').at(-1)!;
      const accepted = await call(server, 'POST', '/api/v1/members/invitations/accept', {
        token,
        password: PASSWORD,
      });
      expect(accepted.status).toBe(201);
      expect(JSON.stringify(logLines)).not.toContain(SMTP_PASSWORD);
    } finally {
      await server.api('PATCH', `/api/v1/credentials/${id}`, { data: { port: smtp.port } });
    }
  });

  it('a refused recipient: the reply code and text in the answer', async () => {
    smtp.refuseRecipient.set('nobody@example.com', { code: 550, text: '5.1.1 User unknown' });
    const res = await invite('nobody@example.com');
    expect(res.status).toBe(201);
    expect(res.body.mail).toEqual({
      sent: false,
      to: 'nobody@example.com',
      error: expect.stringContaining('550 5.1.1 User unknown'),
    });
  });
});
