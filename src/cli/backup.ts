/**
 * `hookflow backup FILE` and `hookflow restore FILE --data-dir DIR` (SPEC 12).
 *
 * The archive is a plain (uncompressed) tar of these parts:
 *   manifest.json     hookflow version, schema version, counts, each part's size and sha256, and
 *                     each stored file's id, size and sha256
 *   manifest.sha256   the sha256 of manifest.json, so that a damaged manifest is named too
 *   hookflow.sqlite   an online snapshot of the store (store/sqlite/backup.ts), which holds the
 *                     stored files themselves: they are rows of the store, so the snapshot has every
 *                     file its executions reference, as of the same instant
 *   encryption.key    only with --include-key: the key secrets at rest are sealed with
 * Uncompressed so that a damaged byte stays in its part and the refusal can name that part (in a
 * gzip stream it breaks everything after it); compress the archive yourself if you like.
 *
 * Restore writes nothing into DIR until every part has been read and checked: it works in a
 * temporary folder beside DIR and moves the checked files in at the end.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import * as tar from 'tar';
import { CONFIG_FLAGS, type Config, ConfigError, loadConfig } from '../config.js';
import { SecretBox } from '../security/secrets.js';
import {
  SQLITE_FILE,
  type SnapshotCounts,
  type SnapshotFacts,
  type StoredFile,
  inspectSnapshot,
  knownMigrations,
  snapshotSqlite,
} from '../store/sqlite/backup.js';

const FORMAT = 'hookflow-backup';
const FORMAT_VERSION = 1;
const MANIFEST = 'manifest.json';
const MANIFEST_SUM = 'manifest.sha256';
const KEY_FILE = 'encryption.key';
const PARTS = new Set([MANIFEST, MANIFEST_SUM, SQLITE_FILE, KEY_FILE]);

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  createdAt: string;
  hookflowVersion: string;
  schemaVersion: string;
  counts: SnapshotCounts;
  /** The parts after the manifest (hookflow.sqlite, and encryption.key when included). */
  parts: { name: string; size: number; sha256: string }[];
  /** Where the key comes from on the backed-up installation; whether it is in the archive. */
  key: { included: boolean; source: 'HOOKFLOW_ENCRYPTION_KEY' | 'key file' | 'none' };
  files: StoredFile[];
}

interface Deps {
  env: Record<string, string | undefined>;
  cwd: string;
  showHelp(asError: boolean): number;
  stderr?: { write(text: string): unknown };
}

const BACKUP_OPTIONS = {
  ...Object.fromEntries(CONFIG_FLAGS.map((f) => [f, { type: 'string' as const }])),
  'include-key': { type: 'boolean' as const },
  help: { type: 'boolean' as const, short: 'h' },
};

export async function backup(args: string[], deps: Deps): Promise<number> {
  const say = sayer(deps);
  const { values, positionals } = parseArgs({
    args,
    options: BACKUP_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return deps.showHelp(false);
  if (positionals.length !== 1) {
    say(`hookflow: backup needs one FILE (the archive to write). Run \`hookflow backup --help\`.`);
    return 2;
  }
  const file = path.resolve(deps.cwd, positionals[0]!);
  const config = loadConfig({ env: deps.env, argv: args, cwd: deps.cwd });
  if (config.store.databaseUrl) {
    say(
      'hookflow: backup copies the embedded SQLite store; on PostgreSQL back up the database with pg_dump (e.g. `pg_dump --format=custom --file=hookflow.dump "$HOOKFLOW_DATABASE_URL"`) and keep HOOKFLOW_ENCRYPTION_KEY with it: without that key the stored credentials and webhook secrets cannot be opened.',
    );
    return 2;
  }
  const dataDir = config.store.dataDir;
  if (!fs.existsSync(path.join(dataDir, SQLITE_FILE))) {
    say(
      `hookflow: ${dataDir} holds no hookflow store (${SQLITE_FILE}); pass --data-dir or set HOOKFLOW_DATA_DIR.`,
    );
    return 1;
  }
  const started = Date.now();
  const staging = await fsp.mkdtemp(path.join(path.dirname(file), `.${path.basename(file)}.parts-`));
  try {
    say(`Snapshot of ${path.join(dataDir, SQLITE_FILE)}…`);
    const db = path.join(staging, SQLITE_FILE);
    const snap = await snapshotSqlite(dataDir, db);
    await fsp.chmod(db, 0o600);
    say(`  ${mib(snap.bytes)} (${snap.pages} pages) in ${seconds(Date.now() - started)}`);

    const facts = checkFiles(db, say);
    const key = currentKey(config);
    const parts = [{ name: SQLITE_FILE, ...(await hashFile(db)) }];
    if (values['include-key'] && key) {
      await fsp.writeFile(path.join(staging, KEY_FILE), `${key.value}\n`, { mode: 0o600 });
      parts.push({ name: KEY_FILE, ...(await hashFile(path.join(staging, KEY_FILE))) });
    }
    const manifest: Manifest = {
      format: FORMAT,
      formatVersion: FORMAT_VERSION,
      createdAt: new Date(started).toISOString(),
      hookflowVersion: hookflowVersion(),
      schemaVersion: facts.schemaVersion,
      counts: facts.counts,
      parts,
      key: { included: Boolean(values['include-key'] && key), source: key?.source ?? 'none' },
      files: facts.files,
    };
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    await fsp.writeFile(path.join(staging, MANIFEST), text, { mode: 0o600 });
    await fsp.writeFile(path.join(staging, MANIFEST_SUM), `${sha256(text)}  ${MANIFEST}\n`, { mode: 0o600 });

    // Written aside and renamed: FILE is either the whole archive or untouched.
    const tmp = path.join(staging, 'archive.tar');
    const total = parts.reduce((n, p) => n + p.size, 0);
    say(`Writing ${file}: ${parts.length + 2} parts, ${mib(total)}…`);
    const ticker = setInterval(() => {
      const size = fs.statSync(tmp, { throwIfNoEntry: false })?.size ?? 0;
      say(`  ${mib(size)} of ${mib(total)}`);
    }, 1000);
    try {
      await tar.c({ file: tmp, cwd: staging, portable: true, mode: 0o600 }, [
        MANIFEST,
        MANIFEST_SUM,
        ...parts.map((p) => p.name),
      ]);
    } finally {
      clearInterval(ticker);
    }
    await fsp.chmod(tmp, 0o600);
    await fsp.rename(tmp, file);
    const size = (await fsp.stat(file)).size;
    const c = facts.counts;
    say(
      `Wrote ${file} (${mib(size)}) in ${seconds(Date.now() - started)}: ${c.workflows} workflow(s), ${c.executions} execution(s), ${c.credentials} credential(s), ${c.files} file(s); hookflow ${manifest.hookflowVersion}, schema ${manifest.schemaVersion}.`,
    );
    if (manifest.key.included) {
      say(
        `The archive includes the encryption key (${key!.source === 'key file' ? `from ${path.join(dataDir, KEY_FILE)}` : 'the value of HOOKFLOW_ENCRYPTION_KEY'}): whoever holds the archive can open the stored credentials. Keep it as safe as the key itself.`,
      );
    } else if (key) {
      say(
        key.source === 'key file'
          ? `The archive does not include the encryption key: keep ${path.join(dataDir, KEY_FILE)} (or run again with --include-key); without it the stored credentials and webhook secrets cannot be opened.`
          : 'The archive does not include the encryption key: keep the value of HOOKFLOW_ENCRYPTION_KEY (or run again with --include-key); without it the stored credentials and webhook secrets cannot be opened.',
      );
    } else if (values['include-key']) {
      say('No encryption key is set or stored in the data dir: there is no key to include.');
    }
    const damaged = facts.files.filter((f) => f.recordedSha256 !== undefined);
    return damaged.length > 0 ? 1 : 0;
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
  }
}

/** Each stored file's bytes read from the snapshot and checked against the sha256 recorded on receipt. */
function checkFiles(db: string, say: (line: string) => void): SnapshotFacts {
  let last = Date.now();
  const facts = inspectSnapshot(db, (bytes) => {
    if (Date.now() - last < 1000) return;
    last = Date.now();
    say(`  checking stored files: ${mib(bytes)} read`);
  });
  const bytes = facts.files.reduce((n, f) => n + f.size, 0);
  say(`  ${facts.files.length} stored file(s), ${mib(bytes)}, sha256 checked`);
  for (const f of facts.files) {
    if (f.recordedSha256 !== undefined)
      say(
        `hookflow: stored file ${f.id} (execution ${f.executionId ?? '-'}) no longer matches the sha256 recorded when it was received; it is in the archive as it is now (manifest: recordedSha256).`,
      );
  }
  return facts;
}

const RESTORE_OPTIONS = {
  ...Object.fromEntries(CONFIG_FLAGS.map((f) => [f, { type: 'string' as const }])),
  help: { type: 'boolean' as const, short: 'h' },
};

export async function restore(args: string[], deps: Deps): Promise<number> {
  const say = sayer(deps);
  const { values, positionals } = parseArgs({
    args,
    options: RESTORE_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return deps.showHelp(false);
  if (positionals.length !== 1) {
    say('hookflow: restore needs one FILE (the archive to read). Run `hookflow restore --help`.');
    return 2;
  }
  if ((values as Record<string, unknown>)['data-dir'] === undefined && !deps.env.HOOKFLOW_DATA_DIR) {
    say('hookflow: restore needs --data-dir DIR (an empty or new folder to restore into).');
    return 2;
  }
  const file = path.resolve(deps.cwd, positionals[0]!);
  const config = loadConfig({ env: deps.env, argv: args, cwd: deps.cwd });
  if (config.store.databaseUrl)
    throw new ConfigError([
      'restore writes an embedded SQLite data dir; unset HOOKFLOW_DATABASE_URL (restore a PostgreSQL database with pg_restore)',
    ]);
  const dir = config.store.dataDir;
  const entries = await fsp.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (entries.length > 0) {
    say(
      `hookflow: ${dir} is not empty (${entries.length} entries); restore writes only into an empty or new folder.`,
    );
    return 2;
  }
  if (!fs.existsSync(file)) {
    say(`hookflow: ${file} does not exist.`);
    return 2;
  }
  const started = Date.now();
  const parent = path.dirname(dir);
  await fsp.mkdir(parent, { recursive: true });
  const staging = await fsp.mkdtemp(path.join(parent, `.${path.basename(dir)}.restore-`));
  try {
    say(`Reading ${file} (${mib((await fsp.stat(file)).size)})…`);
    const read = await readArchive(file, staging, say);
    const refusal = await verify(read, staging);
    if (refusal) {
      say(`hookflow: ${file} cannot be restored: ${refusal}`);
      return 1;
    }
    const manifest = read.manifest!;
    const facts = checkFiles(path.join(staging, SQLITE_FILE), say);
    const mismatch = compareFacts(manifest, facts);
    if (mismatch) {
      say(`hookflow: ${file} cannot be restored: part ${SQLITE_FILE} ${mismatch}`);
      return 1;
    }
    const known = await knownMigrations();
    if (!known.includes(manifest.schemaVersion)) {
      say(
        `hookflow: ${file} comes from a newer hookflow (${manifest.hookflowVersion}, schema ${manifest.schemaVersion}; this one knows up to ${known.at(-1)}): restore it with hookflow ${manifest.hookflowVersion} or later.`,
      );
      return 1;
    }
    const keyNote = keyAdvice(manifest, facts, staging, config, dir);

    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    for (const part of manifest.parts)
      await fsp.rename(path.join(staging, part.name), path.join(dir, part.name));
    const c = manifest.counts;
    say(
      `Restored ${c.workflows} workflow(s), ${c.executions} execution(s), ${c.credentials} credential(s) and ${c.files} file(s) (backup of ${manifest.createdAt}, hookflow ${manifest.hookflowVersion}, schema ${manifest.schemaVersion}) into ${dir} in ${seconds(Date.now() - started)}.`,
    );
    say(keyNote);
    say(`Start it with: hookflow start --data-dir ${dir}`);
    return 0;
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
  }
}

interface ReadArchive {
  /** Each part read: its size and the sha256 of its bytes. */
  parts: Map<string, { size: number; sha256: string }>;
  manifest: Manifest | undefined;
  problem: string | undefined;
}

/** Unpacks the archive's parts into `staging`, hashing each as it is written. */
async function readArchive(file: string, staging: string, say: (line: string) => void): Promise<ReadArchive> {
  const parts = new Map<string, { size: number; sha256: string }>();
  const writes: Promise<void>[] = [];
  let problem: string | undefined;
  let done = 0;
  let last = Date.now();
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry(entry) {
        const name = entry.path;
        if (entry.type !== 'File' || !PARTS.has(name) || parts.has(name)) {
          problem ??= `it holds an unexpected entry "${name}" (not a hookflow backup?)`;
          entry.resume();
          return;
        }
        const hash = createHash('sha256');
        let size = 0;
        parts.set(name, { size: 0, sha256: '' });
        const hasher = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            hash.update(chunk);
            size += chunk.byteLength;
            done += chunk.byteLength;
            if (Date.now() - last >= 1000) {
              last = Date.now();
              say(`  ${mib(done)} read`);
            }
            cb(null, chunk);
          },
        });
        writes.push(
          pipeline(entry, hasher, fs.createWriteStream(path.join(staging, name), { mode: 0o600 })).then(
            () => {
              parts.set(name, { size, sha256: hash.digest('hex') });
            },
          ),
        );
      },
    });
    await Promise.all(writes);
  } catch (err) {
    await Promise.allSettled(writes);
    return {
      parts,
      manifest: undefined,
      problem: `the archive is damaged or not a tar file (${err instanceof Error ? err.message : String(err)})`,
    };
  }
  if (problem) return { parts, manifest: undefined, problem };
  let manifest: Manifest | undefined;
  if (parts.has(MANIFEST)) {
    try {
      manifest = JSON.parse(await fsp.readFile(path.join(staging, MANIFEST), 'utf8')) as Manifest;
    } catch {
      manifest = undefined;
    }
  }
  return { parts, manifest, problem: undefined };
}

/** Why the parts read cannot be restored (naming the part), or undefined when each one checks out. */
async function verify(read: ReadArchive, staging: string): Promise<string | undefined> {
  if (read.problem) return read.problem;
  const sum = read.parts.has(MANIFEST_SUM)
    ? (await fsp.readFile(path.join(staging, MANIFEST_SUM), 'utf8')).split(/\s/)[0]
    : undefined;
  if (!read.parts.has(MANIFEST) || sum === undefined)
    return `part ${read.parts.has(MANIFEST) ? MANIFEST_SUM : MANIFEST} is missing (not a hookflow backup?)`;
  if (read.parts.get(MANIFEST)!.sha256 !== sum)
    return `part ${MANIFEST} is damaged: its sha256 differs from ${MANIFEST_SUM}`;
  const manifest = read.manifest;
  if (!manifest || manifest.format !== FORMAT || !Array.isArray(manifest.parts))
    return `part ${MANIFEST} is not a hookflow backup manifest`;
  if (manifest.formatVersion > FORMAT_VERSION)
    return `it is a backup of format ${manifest.formatVersion}, newer than this hookflow reads (${FORMAT_VERSION})`;
  if (!manifest.parts.some((p) => p.name === SQLITE_FILE)) return `the manifest lists no ${SQLITE_FILE}`;
  for (const part of manifest.parts) {
    const got = read.parts.get(part.name);
    if (!got) return `part ${part.name} is missing`;
    if (got.size !== part.size)
      return `part ${part.name} is damaged: ${got.size} bytes, the manifest says ${part.size}`;
    if (got.sha256 !== part.sha256)
      return `part ${part.name} is damaged: its sha256 differs from the manifest's`;
  }
  for (const name of read.parts.keys())
    if (name !== MANIFEST && name !== MANIFEST_SUM && !manifest.parts.some((p) => p.name === name))
      return `part ${name} is not in the manifest`;
  return undefined;
}

/** What the restored snapshot holds that the manifest does not say (its counts, its files). */
function compareFacts(manifest: Manifest, facts: SnapshotFacts): string | undefined {
  for (const k of ['workflows', 'executions', 'credentials', 'files'] as const)
    if (facts.counts[k] !== manifest.counts[k])
      return `holds ${facts.counts[k]} ${k}, the manifest says ${manifest.counts[k]}`;
  if (facts.schemaVersion !== manifest.schemaVersion)
    return `has schema ${facts.schemaVersion}, the manifest says ${manifest.schemaVersion}`;
  const listed = new Map(manifest.files.map((f) => [f.id, f]));
  for (const f of facts.files) {
    const m = listed.get(f.id);
    if (!m || m.sha256 !== f.sha256 || m.size !== f.size)
      return `holds stored file ${f.id} that differs from the manifest's (sha256 or size)`;
  }
  return undefined;
}

/** The line telling the operator which key the restored data needs, checked against a stored credential. */
function keyAdvice(
  manifest: Manifest,
  facts: SnapshotFacts,
  staging: string,
  config: Config,
  dir: string,
): string {
  const opens = (passphrase: string) =>
    facts.sealedSample === undefined ||
    SecretBox.fromPassphrase(passphrase).tryReveal(facts.sealedSample) !== undefined;
  const archived = manifest.key.included
    ? fs.readFileSync(path.join(staging, KEY_FILE), 'utf8').trim()
    : undefined;
  const env = config.security.encryptionKey;
  if (env !== undefined) {
    if (opens(env))
      return 'HOOKFLOW_ENCRYPTION_KEY opens the restored credentials: start the server with the same value.';
    return archived !== undefined && opens(archived)
      ? `The archive's key (now ${path.join(dir, KEY_FILE)}) opens the restored credentials, but HOOKFLOW_ENCRYPTION_KEY, which wins over the file, does not: start the server without it.`
      : 'hookflow: warning: HOOKFLOW_ENCRYPTION_KEY does not open the restored credentials; start the server with the key of the backed-up installation.';
  }
  if (archived !== undefined)
    return `The archive's encryption key is now ${path.join(dir, KEY_FILE)}; start the server without HOOKFLOW_ENCRYPTION_KEY (or with the same value).`;
  if (facts.counts.credentials === 0 && manifest.key.source === 'none') return 'No encryption key is needed.';
  return manifest.key.source === 'key file'
    ? `The archive holds no encryption key: copy the backed-up installation's encryption.key into ${dir} before the first start (a server started without it generates a new key, and the restored credentials cannot be opened).`
    : `The archive holds no encryption key: start the server with HOOKFLOW_ENCRYPTION_KEY set to the backed-up installation's value (without it a new key is generated, and the restored credentials cannot be opened).`;
}

/** The key secrets at rest are sealed with, as the server finds it (security/secrets.ts SecretBox.load). */
function currentKey(config: Config): { value: string; source: Manifest['key']['source'] } | undefined {
  if (config.security.encryptionKey)
    return { value: config.security.encryptionKey, source: 'HOOKFLOW_ENCRYPTION_KEY' };
  try {
    return {
      value: fs.readFileSync(path.join(config.store.dataDir, KEY_FILE), 'utf8').trim(),
      source: 'key file',
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return undefined;
  }
}

async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { size, sha256: hash.digest('hex') };
}

function hookflowVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function sayer(deps: Deps): (line: string) => void {
  const stderr = deps.stderr ?? process.stderr;
  return (line) => stderr.write(`${line}\n`);
}
