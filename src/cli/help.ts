/**
 * The help texts of `hookflow` and its commands (SPEC 9), printed by `--help` and on bad usage.
 */

const CONFIG_HELP = `Configuration (flag or environment variable):
  --port, HOOKFLOW_PORT                 TCP port (default 5678)
  --host, HOOKFLOW_HOST                 interface to bind (default 0.0.0.0)
  --base-url, HOOKFLOW_BASE_URL         public URL of webhooks and links (default http://localhost:<port>)
  --data-dir, HOOKFLOW_DATA_DIR         folder of the SQLite database (default ./data)
  --database-url, HOOKFLOW_DATABASE_URL postgres://… to use PostgreSQL instead of SQLite
  --log-level, HOOKFLOW_LOG_LEVEL       fatal|error|warn|info|debug|trace|silent (default info)
  HOOKFLOW_LOG_FORMAT                   auto|json|pretty: log lines readable on a terminal (auto), else JSON
  HOOKFLOW_MAX_BODY_BYTES               largest request body (default 16777216)
  HOOKFLOW_ENCRYPTION_KEY               key for secrets at rest
  HOOKFLOW_SQLITE_SYNCHRONOUS           FULL (default) or NORMAL
  HOOKFLOW_EXECUTOR_CONCURRENCY         executions computing at once (default 8)
  HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT       executions held at once, most waiting on the network (default 1000)
  HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST    outbound connections to one host (default 128)
  HOOKFLOW_INGEST_MAX_PENDING           requests waiting for commit before 503 (default 10000)
  HOOKFLOW_INGEST_RUN_PURE              run workflows without effects before the commit (default true)
  HOOKFLOW_LEASE_MS                     lock of a claimed execution without heartbeat (default 30000)
  HOOKFLOW_TRUST_PROXY                  proxies whose X-Forwarded-For is believed (comma-separated)
  HOOKFLOW_MAX_CONCURRENT_REQUESTS      requests in progress before 503 (default 2048)
  HOOKFLOW_MAX_WAITING_RESPONSES        lastStep/respondStep callers waiting before 503 (default 8192)
  HOOKFLOW_ALLOW_PRIVATE_NETWORK        let http steps reach private addresses (default false)
  HOOKFLOW_SQL_PRIVATE_NETWORKS         private ranges (CIDR) sql steps may reach (default none)
  HOOKFLOW_EXECUTION_TIMEOUT_MS         time budget of one execution (default 300000)
  HOOKFLOW_METRICS_TOKEN                bearer token that may read /metrics (default: none)
  HOOKFLOW_MAILER_CREDENTIAL            smtp credential that mails invitations (default: none)

Every setting, with its default: the Configuration section of the README.
Distributed mode on PostgreSQL: see docs/scaling.md.`;

export const HELP: Record<string, string> = {
  main: `hookflow — webhook-driven workflow automation

Usage: hookflow <command> [options]

Commands:
  start                       run everything in one process (webhooks, API, executor)
  webhook                     run only the webhook/API role (distributed mode)
  worker                      run only the executor role (distributed mode)
  tokens create --name N      create an API token (printed alone on the last line)
  tokens list                 list API tokens
  tokens revoke ID            revoke an API token
  setup-code                  print a new one-time code for creating the owner account (first start)
  workflows export [FILE]     write all workflows as JSON (to stdout without FILE)
  workflows import FILE       create or update workflows from a JSON export
  secrets rotate              re-seal every stored secret under HOOKFLOW_NEW_ENCRYPTION_KEY
  listen WORKFLOW_ID          open a test listener on a running server and print each request
  executions list|show|retry|replay   look at and re-run executions on a running server
  test WORKFLOW_ID [--target draft]   run the workflow's tests from captured traffic; exit 1 on a failure
  run WORKFLOW_ID [--item FILE]   run the draft once in test mode on a running server (Run now)
  backup FILE [--include-key] write the store, its files and a manifest to one archive (server may run)
  restore FILE --data-dir DIR restore an archive into an empty DIR

Run \`hookflow <command> --help\` for a command's options.`,
  start: `Usage: hookflow start [options]\n\nRuns webhooks, API and executor in one process.\n\n${CONFIG_HELP}`,
  webhook: `Usage: hookflow webhook [options]\n\nRuns webhooks and the API without an executor (pair it with \`hookflow worker\` on a shared PostgreSQL).\n\n${CONFIG_HELP}`,
  worker: `Usage: hookflow worker [options]\n\nRuns only the executor (pair it with \`hookflow webhook\` on a shared PostgreSQL).\n\n${CONFIG_HELP}`,
  tokens: `Usage:
  hookflow tokens create --name NAME   create an API token; the token is printed alone on the last line of stdout
  hookflow tokens list                 list tokens (id, name, prefix, created, last used)
  hookflow tokens revoke ID            revoke a token

${CONFIG_HELP}`,
  'setup-code': `Usage: hookflow setup-code [options]

Prints a new one-time setup code, alone on the last line of stdout, and the address that opens the
setup page with it. Until the owner account exists, creating it (the UI's first page, or
POST /api/v1/auth/setup) needs such a code. Each hookflow start without an owner prints one too;
every code is valid for 24 hours, older ones keep working, and all are deleted once the owner
exists. Run it against the same data dir or database as the server. Exits 1 when the owner
account already exists.

${CONFIG_HELP}`,
  workflows: `Usage:
  hookflow workflows export [FILE]     write all workflows (secrets masked) as JSON to FILE or stdout:
                                       each one's draft (latest version) and, when production runs an
                                       older version, that one as "published"
  hookflow workflows import FILE       create workflows from FILE (a workflow, an array, or an export);
                                       a workflow whose id exists gets a new version (a draft);
                                       "active": true publishes it ("published" first when present)

http steps keep their "credential" ids; credentials (and their secrets) are not exported: an import
names the ones this installation lacks, and refuses the workflows that use them (docs/credentials.md).

${CONFIG_HELP}`,
  secrets: `Usage: HOOKFLOW_NEW_ENCRYPTION_KEY=<new key> hookflow secrets rotate [options]

Re-seals every secret stored (credentials, webhook auth secrets of every workflow and saved version)
under the new key, in one transaction. The current key is HOOKFLOW_ENCRYPTION_KEY, or the data dir's
generated encryption.key. Stop every hookflow process first, and start them again with the new key:
with HOOKFLOW_ENCRYPTION_KEY, set it to the new value everywhere; with the generated key file, the
file is replaced with the new key. Running it again is harmless. See docs/credentials.md.

  HOOKFLOW_NEW_ENCRYPTION_KEY   the new key (32+ characters; e.g. the output of \`openssl rand -base64 32\`)

${CONFIG_HELP}`,
  executions: `Usage:
  hookflow executions list [--workflow ID] [--status S] [--mode test|production|error] [--limit N] [--json]
                         [--where PATH=VALUE]   e.g. --where body.order_id=o-1 (a trigger-item field;
                                                indexed when the workflow declares it in
                                                settings.searchFields, see docs/search.md)
  hookflow executions show ID [--json]   the trigger item and each step's output or error
  hookflow executions retry ID           run the same item on the same workflow version again
  hookflow executions replay ID [--target published|draft]
                                         run the stored item on the workflow's published version
                                         (production mode; the default) or its draft (test mode)

These talk to a running server: --url URL (or HOOKFLOW_URL; default http://127.0.0.1:$HOOKFLOW_PORT)
and --token TOKEN (or HOOKFLOW_TOKEN; create one with \`hookflow tokens create --name cli\`).`,
  run: `Usage: hookflow run <workflowId> [--item FILE] [--wait]

Runs the workflow's draft once in test mode on a running server (the editor's Run now) and prints
the new execution's id. The first step receives the JSON object in FILE (\`-\`: stdin) as the
trigger item; without --item, the newest captured test event's item, else {}.

  --wait    follow the execution to its end: print its status on stderr, exit 1 when it failed

This talks to a running server: --url URL (or HOOKFLOW_URL; default http://127.0.0.1:$HOOKFLOW_PORT)
and --token TOKEN (or HOOKFLOW_TOKEN; create one with \`hookflow tokens create --name cli\`).`,
  backup: `Usage: hookflow backup FILE [--include-key] [options]

Writes one archive (a tar) while the server may keep running: an online snapshot of the SQLite store
in the data dir (with every stored file: they are rows of the store), and a manifest (hookflow
version, schema version, counts, the size and sha256 of each part and each stored file). Progress
goes to stderr. FILE is replaced as a whole, never left half-written.

  --include-key        put the encryption key (HOOKFLOW_ENCRYPTION_KEY, or the data dir's
                       encryption.key) into the archive too; without it, keep the key yourself

On PostgreSQL (HOOKFLOW_DATABASE_URL) use pg_dump instead; the command says so and exits 2.
Exit status: 0 when written; 1 when a stored file no longer matches its recorded sha256 (the archive
is written all the same, the manifest names it) or on an error; 2 on bad usage or PostgreSQL.

${CONFIG_HELP}`,
  restore: `Usage: hookflow restore FILE --data-dir DIR

Restores an archive of \`hookflow backup\` into DIR, which must be empty or not exist. Every part is
checked against the manifest's sha256 (a damaged archive is refused, naming the part) before
anything is written to DIR. Then \`hookflow start --data-dir DIR\` serves the same workflows,
credentials, executions and files. Credentials need the backed-up installation's encryption key:
the archive's (\`backup --include-key\`), written to DIR/encryption.key, or HOOKFLOW_ENCRYPTION_KEY.

Exit status: 0 when restored; 1 when the archive is damaged or from a newer hookflow; 2 on bad usage
or a non-empty DIR.`,
  test: `Usage: hookflow test <workflowId> [--target draft|published] [options]

Runs the workflow's tests (made from captured executions: POST /api/v1/workflows/:id/tests) against
its published version (default) or its draft, on a running server. Effects (http, email, sql, waits)
are answered by each test's recorded outputs: nothing leaves the server and nothing is stored.
Prints PASS or FAIL per test and, for a failure, each step whose output differs.

Options:
  --target draft|published   the version to test (default published)
  --json                     print the whole result as JSON
  --url URL                  the server (default HOOKFLOW_URL, else http://127.0.0.1:$HOOKFLOW_PORT or 5678)
  --token TOKEN              an API token (default HOOKFLOW_TOKEN)

Exit status: 0 when every test passed, 1 when one failed, 2 on bad usage.`,
  listen: `Usage: hookflow listen <workflowId> [options]

Opens a test listener on a running hookflow, prints its test URL, then prints each captured request
(method, path, query and body) as it arrives. Stops after the first request unless --keep-listening.

Options:
  --forward-to URL     re-send each request (method, headers, body re-encoded from the capture, its query
                       appended to URL's) to URL, e.g. your own receiver on localhost, and print its
                       status; uploaded files and binary bodies are not stored, so not re-sent
  --timeout SECONDS    how long the listener stays open (1–600, default 120)
  --keep-listening     keep capturing until Ctrl-C or the timeout
  --url BASE, HOOKFLOW_URL      the server (default http://127.0.0.1:$HOOKFLOW_PORT, port 5678)
  --token TOKEN, HOOKFLOW_TOKEN API token (create one with \`hookflow tokens create --name cli\`)

Exit status: 0 after a request arrived, on Ctrl-C (the listener is closed), or when a --keep-listening
listener expires after at least one request; 1 when no request arrived before the timeout, or on an
API or network error; 2 on bad usage or a missing token.`,
};
