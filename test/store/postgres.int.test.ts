import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { storeContract } from './contract.js';

storeContract('store contract: PostgreSQL', async () => {
  const database = await createTestDatabase();
  // The data dir is unused by the PostgreSQL store; a temp dir keeps the test from touching ./data.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-store-'));
  const config = loadConfig({ env: { HOOKFLOW_DATA_DIR: dataDir, HOOKFLOW_DATABASE_URL: database.url } });
  const store = await openStore(config.store, createLogger('silent', 2));
  return {
    store,
    async cleanup() {
      await store.close();
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
