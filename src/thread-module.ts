/**
 * Where the compiled module of a worker thread is. Compiled, `dist/<path>` sits beside this file's
 * own compiled self. Run from the TypeScript sources (Vitest), the compiled module in dist/ is used
 * all the same: the test setup builds dist/, and Node 20 cannot load TypeScript in a thread.
 */
export function threadModule(path: string): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL(`../dist/${path}`, import.meta.url)
    : new URL(`./${path}`, import.meta.url);
}
