/**
 * Saved workflow versions as the executor reads them (Worker). A saved version never changes, so a version found is kept; the cap bounds memory. One not found
 * is not kept (looked up again next time): it is a deleted workflow's, and rare.
 */
import type { Workflow } from '../model/workflow.js';

const MAX_CACHED_VERSIONS = 1000;

export class VersionCache {
  readonly #versions = new Map<string, Workflow>();

  /** The kept version, if any. */
  cached(id: string, version: number): Workflow | undefined {
    return this.#versions.get(`${id}@${version}`);
  }

  /** Keeps what a lookup found (undefined: nothing) and returns it. */
  keep(id: string, version: number, workflow: Workflow | undefined): Workflow | undefined {
    if (workflow) {
      if (this.#versions.size >= MAX_CACHED_VERSIONS) this.#versions.clear();
      this.#versions.set(`${id}@${version}`, workflow);
    }
    return workflow;
  }
}
