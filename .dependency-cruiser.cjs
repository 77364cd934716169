/**
 * The import layers of STYLE.md ("Imports flow one way: cli/http → webhooks → queue → engine →
 * store/bus → model/shared → errors/config"), as rules `npm run lint` checks on src/ and web/src.
 *
 * Only edges an `import` spells are seen. Worker threads are loaded by URL (thread-module.ts):
 * SQLite's writer thread (src/store/sqlite/writer-thread.ts) imports only the store, and the engine
 * thread (src/queue/engine-runner-thread.ts) the engine, as their own imports say. (The writer
 * thread used to load the engine's pure runner by a URL main.ts handed it, an edge no rule could
 * see; issue 16 part 1 removed it with that fast path.)
 *
 * Type-only imports (`import type`) are erased at build time: they count for the layer rules (a
 * type from a layer above is still a dependency on its shape) but not for this file's no-circular
 * rule. The stricter check is madge's, also in `npm run lint` (.madgerc, `skipTypeImports: false`):
 * no circle in src/ at all, type-only imports included, so that every module can be read, and
 * moved, with what it imports and never with what imports it.
 */

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle of value imports: the modules in it load in an order that depends on who is imported ' +
        'first, and none of them can be understood or moved alone. Move the shared part to the module ' +
        'that owns it (or one below both).',
      from: { path: '^(src|web/src)/' },
      to: {
        circular: true,
        viaOnly: { dependencyTypesNot: ['type-only'] },
      },
    },
    {
      name: 'fastify-only-in-http',
      severity: 'error',
      comment:
        'src/http is the only folder that knows HTTP frameworks (STYLE.md): domain code gets a plain ' +
        'InboundRequest, never a Fastify request or reply.',
      from: { path: '^src/', pathNot: '^src/http/' },
      to: { path: '^node_modules/(fastify|@fastify/|find-my-way|light-my-request)' },
    },
    {
      name: 'http-only-from-the-entry-points',
      severity: 'error',
      comment:
        'src/http is the top layer: only the composition root (main.ts) and the CLI may import it.',
      from: { path: '^src/', pathNot: '^src/(http/|cli/|cli\\.ts$|main\\.ts$)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'entry-points-are-not-imported',
      severity: 'error',
      comment: 'main.ts and the CLI wire everything together; nothing below them may reach up to them.',
      from: { path: '^src/', pathNot: '^src/(cli/|cli\\.ts$)' },
      to: { path: '^src/(cli/|cli\\.ts$|main\\.ts$)' },
    },
    {
      name: 'queue-below-webhooks',
      severity: 'error',
      comment: 'The queue runs executions however they were accepted; it knows nothing of the webhook pipeline.',
      from: { path: '^src/queue/' },
      to: { path: '^src/webhooks/' },
    },
    {
      name: 'errors-config-ids-log-at-the-bottom',
      severity: 'error',
      comment:
        'The bottom layer: every folder imports these, so they import no module of ours — but the ' +
        'CIDR parser (model/cidr.ts, a leaf), with which config.ts checks HOOKFLOW_TRUST_PROXY as ' +
        'triggers check their allowlists.',
      from: { path: '^src/(errors|config|ids|log)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/((errors|config|ids|log)\\.ts|model/cidr\\.ts)$' },
    },
    {
      name: 'bus-below-everything-that-uses-it',
      severity: 'error',
      comment:
        'src/bus carries events between processes (in-process, or PostgreSQL LISTEN/NOTIFY); the ' +
        'webhook front, the queue and the services publish and subscribe, so it knows none of them.',
      from: { path: '^src/bus/' },
      to: { path: '^src/', pathNot: '^src/(bus/|model/|shared/|(errors|config|ids|log)\\.ts$)' },
    },
    {
      name: 'model-imports-nothing-above-it',
      severity: 'error',
      comment:
        'src/model is the domain model: every layer may use it, so it imports only itself and the ' +
        'bottom layer.',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/(model/|shared/|(errors|config|ids|log)\\.ts$)' },
    },
    // The workflow's shape (src/model/workflow.ts: trigger, auth, response, options, steps,
    // settings) and the walk over nested steps live in src/model/ under the rule above; what checks
    // a workflow against the rest of the system (trigger.ts: secrets and templates; paths.ts and
    // references.ts: the store) stays in src/workflows/ beside the service.
    {
      name: 'engine-below-http-webhooks-queue-store',
      severity: 'error',
      comment:
        'The engine runs steps on data; it knows neither HTTP, the webhook pipeline, the queue nor ' +
        'SQL, so the queue (or a test) can run it anywhere.',
      from: { path: '^src/engine/' },
      to: { path: '^src/(http|webhooks|queue|store)/' },
    },
    {
      name: 'store-below-http-webhooks-queue-engine',
      severity: 'error',
      comment:
        'The store is a layer below everything that uses it. (Its writer thread loads the pure runner ' +
        'by URL, an edge no import spells: see the top of this file.)',
      from: { path: '^src/store/' },
      to: { path: '^src/(http|webhooks|queue|engine)/' },
    },
    {
      name: 'sql-only-in-the-store',
      severity: 'error',
      comment:
        'SQL lives in src/store/ (STYLE.md: "no SQL outside store/"): only the store imports the query ' +
        'builder (kysely) and the drivers; everything else calls a repository or a Store method. Type-' +
        'only imports count too: a Kysely type in a signature is the SQL layer leaking out. Exempt: ' +
        'src/bus/pg-bus.ts, whose transport is a PostgreSQL connection of its own (LISTEN/NOTIFY, no ' +
        "table), and src/engine/sql/postgres.ts, the `sql` step's connections to the user's own databases (an " +
        'outside system, like an http step\'s API; never hookflow\'s store). It sees imports only: a service that builds a query on `store.db` imports no kysely, ' +
        'so those are caught by the Biome plugin lint/sql-only-in-the-store.grit (npm run lint too).',
      from: { path: '^src/', pathNot: '^src/(store/|bus/pg-bus\\.ts$|engine/sql/postgres\\.ts$)' },
      to: { path: '^node_modules/(@types/)?(kysely|better-sqlite3|pg)/' },
    },
    {
      name: 'web-imports-web-or-shared',
      severity: 'error',
      comment:
        'The UI bundles what it imports: from src/ only src/shared/, the rules the server and the UI ' +
        'share (path rules, methods, template syntax, response headers, the base path). A type-only ' +
        'import is erased and may name any module (web/src/types.ts re-exports server types).',
      from: { path: '^web/' },
      to: {
        path: '^src/',
        pathNot: '^src/shared/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'shared-stays-browser-safe',
      severity: 'error',
      comment:
        'src/shared/ is bundled into the UI: it must not import Node built-ins or other src/ modules, ' +
        'or the browser bundle would grow a server dependency without anyone noticing.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'shared-no-node-builtins',
      severity: 'error',
      comment: 'src/shared/ runs in browsers too.',
      from: { path: '^src/shared/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'web-no-node-builtins',
      severity: 'error',
      comment: 'The UI runs in a browser.',
      from: { path: '^web/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // A git worktree whose node_modules links to another checkout's: packages keep the linked
    // path (node_modules/...), so the rules about node_modules see them there too.
    preserveSymlinks: true,
    // Type-only imports are seen (and marked 'type-only') only when cruised before compilation.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages like typebox resolve only through their package.json "exports" (ESM, as Node does).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    cache: false,
  },
};
