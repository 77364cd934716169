/**
 * `hookflow listen` as a developer runs it: the built CLI in a child process against a real server,
 * forwarding to a real local receiver. The encoding of forwarded bodies is covered table-driven below.
 */
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { planForward, flatten } from '../../src/cli/listen/forward.js';
import type { CapturedItem } from '../../src/cli/listen/format.js';
import { createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

const root = path.resolve(import.meta.dirname, '../..');

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  // The CLI runs from dist/: build when any source is newer than the last build.
  if (newestMtime(path.join(root, 'src')) > mtime(path.join(root, 'dist/cli.js'))) {
    execSync('npm run build', { cwd: root, stdio: 'pipe' });
  }
  server = await startTestServer();
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.close();
});

describe('hookflow listen', () => {
  it('prints a captured form request and forwards it to the local receiver', async () => {
    const wf = await createWorkflow(server, { trigger: { path: 'cli-listen-form', methods: ['POST'] } });
    const cli = run([
      'listen',
      wf.id,
      '--url',
      server.url,
      '--token',
      server.token,
      '--forward-to',
      `${receiverUrl}/hooks`,
    ]);
    const testUrl = new URL((await cli.waitFor(/Test URL: (\S+)/, 'stdout'))[1]!);
    expect(testUrl.pathname).toBe('/webhook-test/cli-listen-form');

    const res = await fetch(`${server.url}${testUrl.pathname}?source=test`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-provider': 'acme' },
      body: 'param1=a&param2=b&customer[name]=Jo',
    });
    expect(res.status).toBe(200);

    expect(await cli.exited).toBe(0);
    const out = cli.stdout();
    expect(out).toContain('POST /webhook-test/cli-listen-form');
    expect(out).toContain('"source": "test"');
    expect(out).toMatch(
      /body: \{\n {2}"param1": "a",\n {2}"param2": "b",\n {2}"customer": \{\n {4}"name": "Jo"/,
    );
    expect(out).toMatch(/→ forwarded: 200 OK \(\d+ ms\)/);

    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/hooks?source=test');
    expect(got.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(got.headers['x-provider']).toBe('acme');
    expect(new URLSearchParams(got.body).toString()).toBe('param1=a&param2=b&customer%5Bname%5D=Jo');
  });

  it.each([
    {
      name: 'a text body',
      contentType: 'text/plain',
      body: '\x1b[31mred\x1b[0m\rfake prompt\x07 bell\nsecond line\u009b2J',
      shows: ['body: \\x1b[31mred\\x1b[0m\\x0dfake prompt\\x07 bell\nsecond line\\u009b2J'],
    },
    {
      name: 'a JSON body (its layout kept, DEL and C1 escaped)',
      contentType: 'application/json',
      body: JSON.stringify({ title: '\x1b]0;owned\x07', csi: '\u009b31m', del: 'x\x7f' }),
      shows: ['body: {\n  "title": "\\u001b]0;owned\\u0007",\n  "csi": "\\u009b31m",\n  "del": "x\\x7f"\n}'],
    },
  ])(
    'prints control characters of $name escaped, never raw to the terminal',
    async ({ contentType, body, shows }) => {
      const wf = await createWorkflow(server, { trigger: { path: `cli-listen-ctl-${contentType.length}` } });
      const cli = run(['listen', wf.id, '--url', server.url, '--token', server.token]);
      const testUrl = new URL((await cli.waitFor(/Test URL: (\S+)/, 'stdout'))[1]!);
      const res = await fetch(`${server.url}${testUrl.pathname}`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      expect(res.status).toBe(200);
      expect(await cli.exited).toBe(0);
      const out = cli.stdout();
      for (const line of shows) expect(out).toContain(line);
      // No control character but the output's own newlines reaches the terminal.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is about control characters
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    },
  );

  it('closes the listener on Ctrl-C and exits 0', async () => {
    const wf = await createWorkflow(server, { trigger: { path: 'cli-listen-sigint', methods: ['POST'] } });
    const cli = run(['listen', wf.id, '--keep-listening'], {
      HOOKFLOW_URL: server.url,
      HOOKFLOW_TOKEN: server.token,
    });
    await cli.waitFor(/Test URL: /, 'stdout');
    expect((await server.api('GET', `/api/v1/workflows/${wf.id}/test-listener`)).body.listening).toBe(true);

    cli.child.kill('SIGINT');

    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toContain('Stopped listening.');
    expect((await server.api('GET', `/api/v1/workflows/${wf.id}/test-listener`)).body.listening).toBe(false);
  });

  it('exits 1 with a message when nothing arrives before the deadline', async () => {
    const wf = await createWorkflow(server, { trigger: { path: 'cli-listen-deadline' } });
    const cli = run(['listen', wf.id, '--timeout', '1', '--url', server.url, '--token', server.token]);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain('No request arrived within 0:01');
  });

  it("prints the server's message and hint for an unknown workflow", async () => {
    const cli = run([
      'listen',
      '00000000-0000-7000-8000-000000000000',
      '--url',
      server.url,
      '--token',
      server.token,
    ]);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain('There is no workflow with id 00000000-0000-7000-8000-000000000000.');
    expect(cli.stderr()).toContain('GET /api/v1/workflows');
  });

  it('exits 2 and says how to create a token when none is given', async () => {
    const cli = run(['listen', 'some-workflow', '--url', server.url]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain('HOOKFLOW_TOKEN');
    expect(cli.stderr()).toContain('hookflow tokens create --name cli');
  });
});

describe('forwarding re-encodes the captured body', () => {
  const target = new URL('http://127.0.0.1:9/in?k=v');
  const item = (over: Partial<CapturedItem>): CapturedItem => ({
    method: 'POST',
    path: 'p',
    query: {},
    headers: {},
    body: {},
    files: [],
    ...over,
  });

  it.each([
    ['JSON', 'application/json', { a: [1, { b: 2 }] }, '{"a":[1,{"b":2}]}'],
    [
      'a form, nested keys as qs writes them',
      'application/x-www-form-urlencoded',
      { a: { b: '1' }, r: ['x', 'y'] },
      'a%5Bb%5D=1&r=x&r=y',
    ],
    ['text, as is', 'text/plain', 'hello\n', 'hello\n'],
    [
      'XML, rebuilt',
      'application/xml',
      { order: { '@_id': '7', item: ['x', 'y'] } },
      '<order id="7"><item>x</item><item>y</item></order>',
    ],
  ])('%s', (_name, contentType, body, expected) => {
    const plan = planForward(target, item({ headers: { 'content-type': contentType }, body }));
    expect(plan.body).toBe(expected);
  });

  it('keeps end-to-end headers, drops hop-by-hop ones, and appends the captured query', () => {
    const plan = planForward(
      target,
      item({
        query: { page: '2' },
        headers: {
          host: 'hookflow.test',
          'content-length': '9',
          connection: 'keep-alive, x-hop',
          'x-hop': '1',
          'transfer-encoding': 'chunked',
          'content-type': 'application/json',
          'x-signature': '***',
          'x-many': ['1', '2'],
        },
      }),
    );
    expect(plan.url.href).toBe('http://127.0.0.1:9/in?k=v&page=2');
    expect(plan.headers).toEqual({
      'content-type': 'application/json',
      'x-signature': '***',
      'x-many': ['1', '2'],
    });
    expect(plan.notes).toContain('x-signature masked by hookflow, sent as ***');
  });

  it('sends multipart fields without the files, and a binary body not at all, saying so', () => {
    const multipart = planForward(
      target,
      item({
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
        body: { name: 'jo' },
        files: [{ field: 'doc', filename: 'a.pdf', mimeType: 'application/pdf', size: 3 }],
      }),
    );
    expect(multipart.body).toBeInstanceOf(FormData);
    expect(multipart.headers['content-type']).toBeUndefined();
    expect(multipart.notes).toContain('1 file not forwarded (doc: a.pdf)');

    const binary = planForward(
      target,
      item({
        headers: { 'content-type': 'application/octet-stream' },
        files: [{ field: 'body', filename: 'body', mimeType: 'application/octet-stream', size: 4 }],
      }),
    );
    expect(binary.body).toBeUndefined();
    expect(binary.notes[0]).toMatch(/not kept in the capture/);
  });

  it('flattens arrays of objects with indexes', () => {
    expect(flatten({ a: [{ b: '1' }, { b: '2' }] })).toEqual([
      ['a[0][b]', '1'],
      ['a[1][b]', '2'],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------

function run(args: string[], env: Record<string, string> = {}) {
  // The child sees no HOOKFLOW_* from the developer's shell, only what the test passes.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HOOKFLOW_')));
  const child = spawn(process.execPath, [path.join(root, 'bin/hookflow.js'), ...args], {
    cwd: root,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const text = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    text.stdout += s;
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    text.stderr += s;
  });
  const exited = new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
  return {
    child,
    exited,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    /** Resolves with the match once the stream shows it; rejects if the process exits first. */
    async waitFor(pattern: RegExp, stream: 'stdout' | 'stderr'): Promise<RegExpMatchArray> {
      for (;;) {
        const match = text[stream].match(pattern);
        if (match) return match;
        if (child.exitCode !== null) {
          throw new Error(
            `hookflow exited ${child.exitCode} before printing ${pattern}:\n${text.stdout}\n${text.stderr}`,
          );
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

function mtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, mtime(path.join(entry.parentPath, entry.name)));
  }
  return newest;
}
