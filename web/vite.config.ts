/**
 * The web UI build: `vite build --config web/vite.config.ts` writes static files to dist/web, which
 * the server serves at `/` (src/http/routes/ui.ts). Only dist/web is emptied; tsc's dist/*.js stay.
 * `vite --config web/vite.config.ts` runs a dev server that proxies the API and webhooks to a
 * hookflow on localhost:5678.
 */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = new URL('.', import.meta.url).pathname;
const backend = process.env.HOOKFLOW_DEV_BACKEND ?? 'http://localhost:5678';

export default defineConfig({
  root,
  // Files are linked relative to the page's <base href>, which the server sets to where the UI
  // lives (the root, or a path behind a proxy: HOOKFLOW_BASE_URL).
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    sourcemap: true,
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
