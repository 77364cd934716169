/**
 * Draft and published, as the editor says it (SPEC 1). Every save is a new version, the
 * draft; production runs `publishedVersion` until Publish (or Activate) makes the latest version
 * live. These sentences are the one place the editor words that, so the header, the notices and
 * the publish dialog cannot disagree.
 */
import type { Step, Workflow } from '../types';

type Versions = Pick<Workflow, 'active' | 'version' | 'publishedVersion'> & {
  /** A schedule (SPEC 7f) has no URLs: its sentences speak of scheduled runs. */
  trigger?: { type: Workflow['trigger']['type'] };
};

const isSchedule = (w: Versions) => w.trigger?.type === 'schedule';

export interface PublishState {
  /** live: production runs the draft; ahead: a newer draft waits; inactive: production does not serve. */
  kind: 'live' | 'ahead' | 'inactive';
  /** Short, for the header: "Published v7 · draft v9". */
  label: string;
  /** One sentence of what that means for live traffic. */
  detail: string;
  /** Whether Publish has something to put live (an active workflow whose draft is newer). */
  canPublish: boolean;
}

export function publishState(w: Versions): PublishState {
  if (!w.active) {
    return {
      kind: 'inactive',
      label:
        w.publishedVersion === null
          ? `Not active · draft v${w.version} (never published)`
          : `Not active · draft v${w.version}`,
      detail: isSchedule(w)
        ? `Nothing runs on schedule. Activating publishes the latest saved version (v${w.version}) and starts its schedule.`
        : `Only the test URL serves. Activating publishes the latest saved version (v${w.version}).`,
      canPublish: false,
    };
  }
  if (w.publishedVersion === null || w.publishedVersion < w.version) {
    const live = w.publishedVersion === null ? 'nothing' : `v${w.publishedVersion}`;
    return {
      kind: 'ahead',
      label:
        w.publishedVersion === null
          ? `Draft v${w.version} (never published)`
          : `Published v${w.publishedVersion} · draft v${w.version}`,
      detail: isSchedule(w)
        ? `The schedule runs ${live}; draft v${w.version} waits. Publish to put it live.`
        : `Live traffic runs ${live}; the test URL runs draft v${w.version}. Publish to put it live.`,
      canPublish: true,
    };
  }
  return {
    kind: 'live',
    label: `Live · v${w.publishedVersion}`,
    detail: isSchedule(w)
      ? `The schedule runs v${w.publishedVersion}, the latest saved version.`
      : `The production URL serves v${w.publishedVersion}, the latest saved version.`,
    canPublish: false,
  };
}

/** What the editor says after a save (Save, Listen or Activate saving first). */
export function savedNotice(w: Versions): string {
  if (!w.active)
    return isSchedule(w)
      ? `Saved as draft v${w.version}. The workflow is not active: nothing runs on schedule.`
      : `Saved as draft v${w.version}. The workflow is not active: only the test URL runs it.`;
  if (w.publishedVersion === w.version) return `Saved v${w.version}; it is live.`;
  return `Saved as draft v${w.version} — live traffic still runs ${
    w.publishedVersion === null ? 'nothing' : `v${w.publishedVersion}`
  }. Publish to put the draft live.`;
}

/** The content a version is made of, as compared and shown side by side (no computed URLs). */
export interface VersionContent {
  name: string;
  trigger: Record<string, unknown>;
  steps: Step[];
  settings?: unknown;
}

/** Name, trigger (without what the server computes: the URLs, a schedule's next run), steps and settings. */
export function versionContent(v: {
  name: string;
  trigger: object;
  steps: Step[];
  settings?: unknown;
}): VersionContent {
  const { testUrl: _t, productionUrl: _p, nextRunAt: _n, ...trigger } = v.trigger as Record<string, unknown>;
  return {
    name: v.name,
    trigger,
    steps: v.steps,
    ...(v.settings !== undefined ? { settings: v.settings } : {}),
  };
}
