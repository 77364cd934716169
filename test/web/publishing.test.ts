import { describe, expect, it } from 'vitest';
import { publishState, savedNotice, versionContent } from '../../web/src/lib/publishing.js';

describe('publishState', () => {
  it('an active workflow whose draft is ahead can be published', () => {
    expect(publishState({ active: true, version: 9, publishedVersion: 7 })).toEqual({
      kind: 'ahead',
      label: 'Published v7 · draft v9',
      detail: 'Live traffic runs v7; the test URL runs draft v9. Publish to put it live.',
      canPublish: true,
    });
  });

  it('an active workflow running its latest version is live, with nothing to publish', () => {
    const state = publishState({ active: true, version: 7, publishedVersion: 7 });
    expect(state).toMatchObject({ kind: 'live', label: 'Live · v7', canPublish: false });
  });

  it('an inactive workflow says whether it was ever published, and that activating publishes', () => {
    const never = publishState({ active: false, version: 3, publishedVersion: null });
    expect(never).toMatchObject({
      kind: 'inactive',
      label: 'Not active · draft v3 (never published)',
      canPublish: false,
    });
    expect(never.detail).toContain('Activating publishes the latest saved version (v3)');
    expect(publishState({ active: false, version: 9, publishedVersion: 7 }).label).toBe(
      'Not active · draft v9',
    );
  });
});

describe('savedNotice', () => {
  it('says live traffic still runs the published version when an active workflow is saved', () => {
    expect(savedNotice({ active: true, version: 9, publishedVersion: 7 })).toBe(
      'Saved as draft v9 — live traffic still runs v7. Publish to put the draft live.',
    );
  });

  it('says only the test URL runs a draft of an inactive workflow', () => {
    expect(savedNotice({ active: false, version: 2, publishedVersion: null })).toBe(
      'Saved as draft v2. The workflow is not active: only the test URL runs it.',
    );
  });
});

describe('versionContent', () => {
  const trigger = {
    type: 'webhook',
    path: 'orders',
    methods: ['POST'],
    testUrl: 'http://h/webhook-test/orders',
    productionUrl: 'http://h/webhook/orders',
  };

  it('leaves out the URLs the server computes', () => {
    expect(versionContent({ name: 'n', trigger, steps: [] })).toEqual({
      name: 'n',
      trigger: { type: 'webhook', path: 'orders', methods: ['POST'] },
      steps: [],
    });
  });

  it('keeps the settings when the version has them', () => {
    expect(versionContent({ name: 'n', trigger, steps: [], settings: { timeoutMs: 5 } }).settings).toEqual({
      timeoutMs: 5,
    });
  });
});
