import { defineConfig } from 'vitest/config';
import { NODE_FLAGS } from './bin/node-flags.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Removes the temporary directories a test file made, after its last hook.
    setupFiles: ['test/helpers/cleanup.ts'],
    environment: 'node',
    // Integration tests start real servers and databases; give them room but fail hung ones.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The V8 flags a serving `hookflow` runs with (bin/node-flags.js): the servers the tests start in
    // their worker (test/helpers/server.ts) run as production does.
    execArgv: [...NODE_FLAGS],
  },
});
