/**
 * The installable package (SPEC 12): `npm pack` of this working tree (its `prepack` builds the
 * server and the UI afresh) gives a tarball with the built code and no sources or tests; installed
 * into an empty prefix with production dependencies only, its `hookflow start` serves `/healthz`,
 * the UI's page and the page's script.
 *
 * The pack runs in a copy of the package's sources (node_modules linked), so that its build does
 * not replace the dist/ other test files run from. better-sqlite3's install first looks for a
 * prebuilt binary (prebuild-install, which downloads one from GitHub), else compiles SQLite from
 * source: ~2.5 minutes on this 2-core machine, against ~10 s for the rest of the install. The
 * test hands prebuild-install this checkout's own binary of the same version as a local prebuild
 * (npm_config_better_sqlite3_local_prebuilds), standing in for the download; set
 * HOOKFLOW_TEST_PACKAGE_FROM_SOURCE=1 to compile it as an offline machine would.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import { afterAll, expect, it } from 'vitest';
import { freePort } from './helpers/process.js';
import { tempDir } from './helpers/temp-dir.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
/** What `npm pack` needs of the checkout: the package's sources and build configuration. */
const SOURCES = [
  'package.json',
  'package-lock.json',
  'README.md',
  'bin',
  'src',
  'web',
  'tsconfig.json',
  'tsconfig.build.json',
];

let server: ChildProcess | undefined;

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
  }
});

it('packs, installs with production dependencies only, and serves the built UI and API', async () => {
  const work = tempDir('hookflow-package-');
  const copy = path.join(work, 'source');
  fs.mkdirSync(copy);
  for (const name of SOURCES) fs.cpSync(path.join(root, name), path.join(copy, name), { recursive: true });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'), 'dir');

  let t = Date.now();
  await run('npm', ['pack', '--pack-destination', work], { cwd: copy, maxBuffer: 64 * 1024 * 1024 });
  const tgz = fs.readdirSync(work).find((f) => /^hookflow-.*\.tgz$/.test(f));
  expect(tgz).toBeDefined();
  const packed: string[] = [];
  await tar.t({ file: path.join(work, tgz!), onReadEntry: (e) => packed.push(e.path) });
  console.log(
    `npm pack: ${Date.now() - t} ms, ${packed.length} files, ${fs.statSync(path.join(work, tgz!)).size} bytes`,
  );
  expect(packed).toEqual(
    expect.arrayContaining([
      'package/package.json',
      'package/bin/hookflow.js',
      'package/dist/cli.js',
      'package/dist/web/index.html',
    ]),
  );
  expect(packed.filter((p) => /^package\/(src|test|web|docs|bench)\/|\.map$|\.ts$/.test(p))).toEqual([]);

  const env: Record<string, string | undefined> = { ...process.env };
  if (!process.env.HOOKFLOW_TEST_PACKAGE_FROM_SOURCE) {
    const sqlite = path.join(root, 'node_modules/better-sqlite3');
    const { version } = JSON.parse(fs.readFileSync(path.join(sqlite, 'package.json'), 'utf8')) as {
      version: string;
    };
    const prebuilds = path.join(work, 'prebuilds');
    fs.mkdirSync(prebuilds);
    const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    await tar.c({ gzip: true, file: path.join(prebuilds, name), cwd: sqlite }, [
      'build/Release/better_sqlite3.node',
    ]);
    env.npm_config_better_sqlite3_local_prebuilds = prebuilds;
  }
  const prefix = path.join(work, 'prefix');
  t = Date.now();
  const install = await run(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--omit=dev',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      path.join(work, tgz!),
    ],
    { cwd: work, env, maxBuffer: 64 * 1024 * 1024 },
  );
  console.log(`npm install: ${Date.now() - t} ms`);
  // Every package the tarball resolves to must allow this Node.js (20.19+ is supported): a range
  // resolved afresh once took cookie@2 (Node >= 22) through light-my-request 6.8, hence its pin.
  expect(install.stderr, 'npm warned of a package whose engines exclude this Node.js').not.toMatch(
    /EBADENGINE/,
  );
  const installed = path.join(prefix, 'lib/node_modules/hookflow/node_modules');
  expect(fs.existsSync(path.join(installed, 'better-sqlite3/build/Release/better_sqlite3.node'))).toBe(true);
  for (const dev of ['typescript', 'vite', 'vitest', 'react', '@biomejs/biome', 'playwright-core'])
    expect(fs.existsSync(path.join(installed, dev)), `${dev} (a devDependency) is installed`).toBe(false);

  const port = await freePort();
  server = spawn(path.join(prefix, 'bin/hookflow'), ['start'], {
    cwd: work,
    env: {
      ...process.env,
      HOOKFLOW_DATA_DIR: path.join(work, 'data'),
      HOOKFLOW_HOST: '127.0.0.1',
      HOOKFLOW_PORT: String(port),
      HOOKFLOW_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout!.on('data', (d) => (output += d));
  server.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the installed hookflow exited:\n${output}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`the installed hookflow did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await fetch(`${url}/`);
  expect(page.status).toBe(200);
  const html = await page.text();
  const script = /<script type="module"[^>]*src="\.?\/?([^"]+\.js)"/.exec(html)?.[1];
  expect(script, html).toBeDefined();
  const asset = await fetch(`${url}/${script}`);
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toMatch(/javascript/);
  expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
}, 240_000);
