/**
 * The web UI build: `vite build --config web/vite.config.ts` writes static files to dist/web, which
 * the server serves at `/` (src/http/routes/ui.ts). Only dist/web is emptied; tsc's dist/*.js stay.
 * `vite --config web/vite.config.ts` runs a dev server that proxies the API and webhooks to a
 * hookflow on localhost:5678.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = new URL('.', import.meta.url).pathname;
const backend = process.env.HOOKFLOW_DEV_BACKEND ?? 'http://localhost:5678';

export default defineConfig({
  root,
  // Files are linked relative to the page's <base href>, which the server sets to where the UI
  // lives (the root, or a path behind a proxy: HOOKFLOW_BASE_URL).
  base: './',
  plugins: [react(), precompress()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    // No source map in the build: the server would publish it (1.8 MB of our source). Debug with
    // the dev server (`npm run dev:web`), which maps everything.
    sourcemap: false,
    // The CSP of the page allows no inline scripts or styles.
    assetsInlineLimit: 0,
    // One chunk of ~380 kB (React + JSONata + the UI; ~120 kB gzipped) loads once and is cached for a year.
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/webhook': { target: backend, changeOrigin: false },
      '/webhook-test': { target: backend, changeOrigin: false },
    },
  },
});

/**
 * Writes `name.br` and `name.gz` beside every script, style and SVG of the build (index.html is sent by the server, which edits it), which the server
 * sends to browsers that accept them (src/http/routes/ui.ts, @fastify/static `preCompressed`): the
 * bundle is compressed once at maximum effort instead of per request. A few lines with node:zlib
 * rather than a plugin dependency: all it does is compress files.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'hookflow-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    writeBundle() {
      const walk = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
          const full = path.join(dir, e.name);
          return e.isDirectory() ? walk(full) : /\.(js|css|svg|json)$/.test(e.name) ? [full] : [];
        });
      for (const file of walk(outDir)) {
        const data = fs.readFileSync(file);
        if (data.length < 1024) continue;
        fs.writeFileSync(
          `${file}.br`,
          zlib.brotliCompressSync(data, {
            params: {
              [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
              [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
            },
          }),
        );
        fs.writeFileSync(`${file}.gz`, zlib.gzipSync(data, { level: zlib.constants.Z_BEST_COMPRESSION }));
      }
    },
  };
}
