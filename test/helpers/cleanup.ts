/**
 * Setup file of every test file (vitest.config.ts): registered before the file's own hooks, this
 * afterAll runs after them (hooks run as a stack), once its servers are closed.
 */
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dir.js';

afterAll(removeTempDirs);
