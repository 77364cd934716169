/**
 * The `hookflow` command (SPEC 9). Each subcommand parses its own flags strictly (a typo is an
 * error, not a silent default), loads the one config, and exits 0 on success, 1 on a failure,
 * 2 on bad usage or bad configuration.
 */
import { workflowRefs } from './model/step-walk.js';
import fs from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Accounts } from './accounts/accounts.js';
import { CONFIG_FLAGS, ConfigError, loadConfig, type Config } from './config.js';
import { executions } from './cli/executions.js';
import { HELP } from './cli/help.js';
import { run } from './cli/run.js';
import { replaceKeyFile, rotateSecrets } from './cli/secrets.js';
import { AppError } from './errors.js';
import { decodeCursor } from './ids.js';
import { presentWorkflow } from './http/present.js';
import { createLogger } from './log.js';
import { type Hookflow, type Roles, startHookflow } from './main.js';
import { LocalBus } from './bus/bus.js';
import { SecretBox } from './security/secrets.js';
import { openStore } from './store/open.js';
import type { Store } from './store/store.js';
import { TokenService } from './tokens/tokens.js';
import { credentialsRepo } from './store/credentials.js';
import { workflowsRepo } from './store/workflows.js';
import type { WorkflowCreate } from './model/workflow.js';
import { WorkflowService } from './workflows/service.js';
import { credentialRefs } from './model/step-walk.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const CONFIG_OPTIONS: Options = Object.fromEntries(CONFIG_FLAGS.map((f) => [f, { type: 'string' }]));

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        console.log(HELP.main);
        return command === undefined ? 2 : 0;
      case 'start':
        return await serve('start', rest, { http: true, worker: true });
      case 'webhook':
        return await serve('webhook', rest, { http: true, worker: false });
      case 'worker':
        return await serve('worker', rest, { http: false, worker: true });
      case 'tokens':
        return await tokens(rest);
      case 'setup-code':
        return await setupCode(rest);
      case 'workflows':
        return await workflows(rest);
      case 'secrets':
        return await secrets(rest);
      case 'listen': {
        // Loaded only here: its HTTP client (undici, ~4.6 MB of heap) has no use in a serving process.
        const { listen } = await import('./cli/listen.js');
        return await listen(rest, { env: process.env, showHelp: (asError) => help('listen', asError) });
      }
      case 'backup':
      case 'restore': {
        // Loaded only here, like listen: a serving process has no use for tar.
        const { backup, restore } = await import('./cli/backup.js');
        return await (command === 'backup' ? backup : restore)(rest, {
          env: process.env,
          cwd: process.cwd(),
          showHelp: (asError) => help(command, asError),
        });
      }
      case 'test': {
        const { test } = await import('./cli/test.js');
        return await test(rest, { env: process.env, showHelp: (asError) => help('test', asError) });
      }
      case 'executions':
        return await executions(rest, {
          env: process.env,
          showHelp: (asError) => help('executions', asError),
        });
      case 'run':
        return await run(rest, { env: process.env, showHelp: (asError) => help('run', asError) });
      default:
        throw new UsageError(`Unknown command "${command}". Run \`hookflow --help\` to see the commands.`);
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`hookflow: ${err.message}`);
      return 2;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`hookflow: ${(err as Error).message}`);
      return 2;
    }
    if (err instanceof AppError) {
      console.error(`hookflow: ${err.message}${err.hint ? `\n${err.hint}` : ''}`);
      return 1;
    }
    console.error(`hookflow: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

function parse(args: string[], options: Options = {}) {
  return parseArgs({
    args,
    options: { ...CONFIG_OPTIONS, ...options, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
}

function configFrom(args: string[]): Config {
  return loadConfig({ env: process.env, argv: args, cwd: process.cwd() });
}

async function serve(name: string, args: string[], roles: Roles): Promise<number> {
  const { values, positionals } = parse(args);
  if (values.help) return help(name);
  if (positionals.length > 0)
    throw new UsageError(`Unexpected argument "${positionals[0]}". Run \`hookflow ${name} --help\`.`);
  const config = configFrom(args);
  const log = createLogger(config.log.level, 1, config.log.format);
  const hookflow = await startHookflow({ config, log, roles });
  if (roles.http) announce(hookflow, config);
  // A serving process ends only when told to (a signal) or on a fatal error, never because its
  // event loop emptied: every timer of ours is unref'd so that tests and close() never wait on
  // them, and a worker with nothing to do holds no other handle once its connections drop (it
  // exited 0 ~0.1 s after `pg_terminate_backend`, and a supervisor restarting on failure does not
  // restart an exit 0). This one ref'd timer holds the process until the shutdown below; the
  // guards after it make any other way out loud and non-zero.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  let stopping = false;
  // pino's asynchronous destination writes what is buffered when the process exits.
  process.on('beforeExit', () => {
    if (stopping) return;
    log.fatal('the event loop emptied while serving (a bug: only a signal should stop it); exiting 1');
    process.exit(1);
  });
  const fatal = (what: string) => (err: unknown) => {
    log.fatal({ err }, `${what}; exiting 1`);
    process.exit(1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled promise rejection'));
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      stopping = true;
      log.info({ signal }, 'shutting down: finishing in-flight requests and executions');
      // A second signal while draining means "now".
      process.once(signal, () => process.exit(1));
      hookflow.close().then(resolve, (err) => {
        log.error({ err }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  clearInterval(keepAlive);
  log.info('stopped');
  log.flush();
  return 0;
}

/**
 * One plain line for the person who just ran `npm start`: the log lines are JSON for machines, and
 * nothing in them said where the UI is. Before the owner account exists, the address to create it
 * with the setup code (SPEC 11), which is never logged. On stderr, so that stdout stays one JSON
 * document a line.
 */
function announce(hookflow: Hookflow, config: Config): void {
  const base = config.http.baseUrl.replace(/\/$/, '');
  process.stderr.write(
    hookflow.setupCode
      ? `\nhookflow is ready. Open this address in a browser to create the owner account; its setup code works once, for 24 hours (\`hookflow setup-code\` prints a new one):\n${setupLine(base, hookflow.setupCode)}\nWebhooks: ${base}/webhook/<path> · API docs: ${base}/api/docs · stop with Ctrl-C\n\n`
      : `\nhookflow is ready. UI: ${base}/ · webhooks: ${base}/webhook/<path> · API docs: ${base}/api/docs · stop with Ctrl-C\n\n`,
  );
}

const setupLine = (base: string, code: string) => `Create the owner account: ${base}/#setup-code=${code}`;

async function setupCode(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  if (values.help) return help('setup-code');
  if (positionals.length > 0)
    throw new UsageError(`Unexpected argument "${positionals[0]}". Run \`hookflow setup-code --help\`.`);
  return withStore(args, async (store, config) => {
    const code = await new Accounts({ store }).issueSetupCode();
    if (code === undefined) {
      console.error('hookflow: the owner account already exists; sign in instead (no setup code is needed).');
      return 1;
    }
    console.error('A new setup code, valid once and for 24 hours (codes printed before stay valid):');
    console.log(setupLine(config.http.baseUrl.replace(/\/$/, ''), code));
    console.log(code);
    return 0;
  });
}

/** Utility commands open the store directly (SQLite in WAL mode allows this beside a running server). */
async function withStore<T>(args: string[], fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = configFrom(args);
  const store = await openStore(
    config.store,
    createLogger(config.log.level === 'info' ? 'warn' : config.log.level, 2),
  );
  try {
    return await fn(store, config);
  } finally {
    await store.close();
  }
}

async function tokens(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { name: { type: 'string' } });
  const [sub, ...more] = positionals;
  if (values.help || sub === undefined) return help('tokens', sub === undefined && !values.help);
  switch (sub) {
    case 'create': {
      const name = (values as { name?: unknown }).name;
      if (typeof name !== 'string' || name.trim() === '')
        throw new UsageError('tokens create needs --name NAME.');
      return withStore(args, async (store) => {
        const { token, apiToken } = await new TokenService({ store }).create(name.trim());
        console.error(
          `Created API token "${apiToken.name}" (id ${apiToken.id}). It is shown once; store it now:`,
        );
        console.log(token);
        return 0;
      });
    }
    case 'list':
      return withStore(args, async (store) => {
        const service = new TokenService({ store });
        let cursor: string | undefined;
        console.log(['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED'].join('\t'));
        do {
          const page = await service.list(200, cursor);
          for (const t of page.items)
            console.log([t.id, t.name, `${t.prefix}…`, t.createdAt, t.lastUsedAt ?? '-'].join('\t'));
          cursor = page.nextCursor ? decodeCursor(page.nextCursor) : undefined;
        } while (cursor);
        return 0;
      });
    case 'revoke': {
      const id = more[0];
      if (!id) throw new UsageError('tokens revoke needs the token id (see `hookflow tokens list`).');
      return withStore(args, async (store) => {
        await new TokenService({ store }).revoke(id);
        console.error(`Revoked token ${id}.`);
        return 0;
      });
    }
    default:
      throw new UsageError(`Unknown tokens command "${sub}". Run \`hookflow tokens --help\`.`);
  }
}

async function workflows(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  const [sub, file] = positionals;
  if (values.help || sub === undefined) return help('workflows', sub === undefined && !values.help);
  switch (sub) {
    case 'export':
      return withStore(args, async (store, config) => {
        const items = [];
        for (const w of await workflowsRepo.listAll(store.db)) {
          const item = presentWorkflow(w, config.http.baseUrl);
          // An active workflow whose draft is ahead of production (SPEC 1): the published content
          // too, so that importing it keeps that live rather than deploying the draft.
          const published =
            w.active && w.publishedVersion !== null && w.publishedVersion !== w.version
              ? await workflowsRepo.getVersion(store.db, w.id, w.publishedVersion)
              : undefined;
          if (!published) items.push(item);
          else {
            const { name, trigger, steps, settings } = presentWorkflow(published, config.http.baseUrl);
            items.push({ ...item, published: { name, trigger, steps, settings } });
          }
        }
        const text = `${JSON.stringify({ items }, null, 2)}\n`;
        if (file && file !== '-') {
          await fs.writeFile(file, text, { mode: 0o600 });
          console.error(`Exported ${items.length} workflow(s) to ${file}.`);
        } else {
          process.stdout.write(text);
        }
        return 0;
      });
    case 'import': {
      if (!file) throw new UsageError('workflows import needs a FILE.');
      const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
      const list = Array.isArray(parsed)
        ? parsed
        : parsed && typeof parsed === 'object' && Array.isArray((parsed as { items?: unknown }).items)
          ? (parsed as { items: unknown[] }).items
          : [parsed];
      return withStore(args, async (store, config) => {
        const secrets = SecretBox.load(config, createLogger('warn', 2));
        const service = new WorkflowService({ store, bus: new LocalBus(), secrets });
        let failed = 0;
        type Entry = WorkflowCreate & { id?: string; active?: boolean; published?: WorkflowCreate };
        const content = (e: WorkflowCreate): WorkflowCreate => ({
          name: e.name,
          trigger: e.trigger,
          steps: e.steps ?? [],
          ...(e.settings ? { settings: e.settings } : {}),
        });
        const entries = list as Entry[];
        // Credentials are not exported (their secrets stay behind): say at once which ones this
        // installation lacks; the workflows naming them are refused (validation_failed) below.
        const missing = await missingCredentials(store, entries);
        if (missing.size > 0) {
          console.error(
            `This installation lacks ${missing.size} credential(s) the file names; create them (POST /api/v1/credentials or the UI's Credentials page), point the steps at the new ids, and import again:`,
          );
          for (const [id, users] of missing) console.error(`  ${id}  used by ${users.join(', ')}`);
        }
        for (const entry of errorWorkflowsFirst(entries)) {
          try {
            const input = content(entry);
            const published = entry.published ? content(entry.published) : undefined;
            const w = entry.active
              ? await service.importLive(input, entry.id, published)
              : await service.import(input, entry.id);
            console.error(`Imported "${w.name}" (${w.id})${entry.active ? ', active' : ''}.`);
          } catch (err) {
            failed++;
            console.error(
              `Could not import "${entry?.name ?? '?'}": ${err instanceof Error ? err.message : String(err)}`,
            );
          }
        }
        return failed > 0 ? 1 : 0;
      });
    }
    default:
      throw new UsageError(`Unknown workflows command "${sub}". Run \`hookflow workflows --help\`.`);
  }
}

async function secrets(args: string[]): Promise<number> {
  const { values, positionals } = parse(args);
  const [sub] = positionals;
  if (values.help || sub === undefined) return help('secrets', sub === undefined && !values.help);
  if (sub !== 'rotate')
    throw new UsageError(`Unknown secrets command "${sub}". Run \`hookflow secrets --help\`.`);
  const newKey = process.env.HOOKFLOW_NEW_ENCRYPTION_KEY ?? '';
  if (newKey.length < 32)
    throw new ConfigError([
      'HOOKFLOW_NEW_ENCRYPTION_KEY must hold the new key (32+ characters, e.g. `openssl rand -base64 32`)',
    ]);
  return withStore(args, async (store, config) => {
    if (config.security.encryptionKey === newKey)
      throw new ConfigError([
        'HOOKFLOW_NEW_ENCRYPTION_KEY is the current HOOKFLOW_ENCRYPTION_KEY; nothing to rotate',
      ]);
    const current = SecretBox.load(config, createLogger('warn', 2));
    const counts = await rotateSecrets(store, current, SecretBox.fromPassphrase(newKey));
    console.error(
      `Re-sealed ${counts.credentials} credential(s), ${counts.variables} secret variable(s), the webhook secrets of ${counts.workflows} workflow(s) and ${counts.versions} saved version(s) under the new key.`,
    );
    if (config.security.encryptionKey) {
      console.error(
        'Now set HOOKFLOW_ENCRYPTION_KEY to the new key on every hookflow process and start them again.',
      );
    } else {
      const file = replaceKeyFile(config.store.dataDir, newKey);
      console.error(`Wrote the new key to ${file}; back it up with the data, and start hookflow again.`);
    }
    return 0;
  });
}

/** Credential ids the entries' http steps name that this store does not have, with who names them. */
async function missingCredentials(
  store: Store,
  entries: { name?: string; steps?: unknown[]; published?: { steps?: unknown[] } }[],
): Promise<Map<string, string[]>> {
  const refs = new Map<string, string[]>();
  for (const e of entries) {
    for (const steps of [e?.steps, e?.published?.steps]) {
      if (!Array.isArray(steps)) continue;
      for (const ref of credentialRefs(steps)) {
        const users = refs.get(ref.id) ?? [];
        const who = `"${e.name ?? '?'}" ${ref.pointer}`;
        if (!users.includes(who)) users.push(who);
        refs.set(ref.id, users);
      }
    }
  }
  if (refs.size === 0) return refs;
  const found = new Set((await credentialsRepo.getMany(store.db, [...refs.keys()])).map((r) => r.id));
  for (const id of found) refs.delete(id);
  return refs;
}

/**
 * Entries that others name as their error workflow come first: a workflow's settings may only name
 * one that exists (checked on save). Cycles (A ↔ B) keep file order for what is left.
 */
function errorWorkflowsFirst<
  T extends { id?: string; settings?: { errorWorkflowId?: string | null }; steps?: unknown[] },
>(entries: T[]): T[] {
  const pending = [...entries];
  const done = new Set<string>();
  const ids = new Set(entries.map((e) => e?.id).filter((id): id is string => typeof id === 'string'));
  // What an entry names that must exist before it is saved: its error workflow and the workflows
  // its `workflow` steps run (SPEC 7f).
  const needs = (e: T | undefined): string[] => [
    ...(typeof e?.settings?.errorWorkflowId === 'string' ? [e.settings.errorWorkflowId] : []),
    ...(Array.isArray(e?.steps) ? workflowRefs(e.steps).map((r) => r.id) : []),
  ];
  const out: T[] = [];
  for (let progress = true; progress && pending.length > 0; ) {
    progress = false;
    for (let i = 0; i < pending.length; i++) {
      const waiting = needs(pending[i]).some(
        (target) => ids.has(target) && !done.has(target) && target !== pending[i]?.id,
      );
      if (waiting) continue;
      const [entry] = pending.splice(i--, 1);
      if (entry?.id) done.add(entry.id);
      out.push(entry as T);
      progress = true;
    }
  }
  return [...out, ...pending];
}

function help(name: string, asError = false): number {
  (asError ? console.error : console.log)(HELP[name] ?? HELP.main);
  return asError ? 2 : 0;
}
