import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import { storeContract } from './contract.js';

storeContract('store contract: SQLite', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-store-'));
  const config = loadConfig({ env: { HOOKFLOW_DATA_DIR: dataDir } });
  const store = await openStore(config.store, createLogger('silent', 2));
  return {
    store,
    async cleanup() {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
