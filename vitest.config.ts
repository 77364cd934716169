import { defineConfig } from 'vitest/config';

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
  },
});
