import { describe, expect, it } from 'vitest';
import {
  currentFailure,
  fieldLabel,
  type SaveFailure,
  unchangedProblems,
  valueAt,
} from '../../web/src/lib/saveErrors.js';

const body = {
  name: 'Orders',
  trigger: { path: 'orders', methods: ['POST'] },
  steps: [
    { name: 'a', type: 'set', fields: { x: 1 } },
    { name: 'a/b~c', type: 'set', fields: {} },
  ],
};
const edit = (patch: (b: typeof body) => void) => {
  const copy = structuredClone(body);
  patch(copy);
  return copy;
};

describe('valueAt', () => {
  it('follows JSON pointers into objects and arrays, unescaping ~1 and ~0', () => {
    expect(valueAt(body, '/trigger/path')).toBe('orders');
    expect(valueAt(body, '/steps/1/name')).toBe('a/b~c');
    expect(valueAt({ 'a/b': { '~': 2 } }, '/a~1b/~0')).toBe(2);
    expect(valueAt(body, '')).toBe(body);
  });

  it('is undefined where the path does not lead, and never reads inherited keys', () => {
    expect(valueAt(body, '/steps/5/name')).toBeUndefined();
    expect(valueAt(body, '/name/length')).toBeUndefined();
    expect(valueAt(body, '/trigger/constructor')).toBeUndefined();
    expect(valueAt(body, '/__proto__')).toBeUndefined();
  });
});

describe('unchangedProblems', () => {
  const problems = [
    { field: '/trigger/path', message: 'is used by another workflow' },
    { field: '/steps/0/name', message: 'is used by another step' },
  ];

  it('drops the problem of a field that changed and keeps the others', () => {
    const now = edit((b) => {
      b.trigger.path = 'orders2';
    });
    expect(unchangedProblems(problems, body, now)).toEqual([problems[1]]);
  });

  it('drops a problem on a step when anything inside it changed, and keeps all when nothing did', () => {
    const now = edit((b) => {
      b.steps[0]!.name = 'b';
    });
    expect(unchangedProblems(problems, body, now)).toEqual([problems[0]]);
    expect(unchangedProblems([{ field: '/steps/0', message: 'bad' }], body, now)).toEqual([]);
    expect(unchangedProblems(problems, body, structuredClone(body))).toEqual(problems);
  });
});

describe('currentFailure', () => {
  const server: SaveFailure = {
    status: 409,
    code: 'path_conflict',
    message: 'The path is used by another workflow.',
    fields: [{ field: '/trigger/path', message: 'is used by "Shop"' }],
    local: false,
    body,
  };

  it('shows nothing once the draft is back to the saved version, whatever failed', () => {
    expect(currentFailure(server, body, [], false)).toBeNull();
    expect(
      currentFailure({ ...server, local: true }, body, [{ field: '/name', message: 'x' }], false),
    ).toBeNull();
  });

  it("keeps the server's failure while its field is unchanged, and drops it once the field changes", () => {
    expect(currentFailure(server, body, [], true)?.fields).toEqual(server.fields);
    const fixed = edit((b) => {
      b.trigger.path = 'elsewhere';
    });
    expect(currentFailure(server, fixed, [], true)).toBeNull();
    const other = edit((b) => {
      b.name = 'Renamed';
    });
    expect(currentFailure(server, other, [], true)?.code).toBe('path_conflict');
  });

  it("shows the form's own problems as they are now: gone when fixed", () => {
    const local: SaveFailure = { ...server, code: 'validation_failed', fields: [], local: true };
    const live = [{ field: '/steps/1/name', message: '"a" is used by another step' }];
    expect(currentFailure(local, body, live, true)?.fields).toEqual(live);
    expect(currentFailure(local, body, [], true)).toBeNull();
  });

  it('keeps a failure without fields until the draft changes', () => {
    const down: SaveFailure = { ...server, status: 0, code: 'unreachable', fields: [] };
    expect(currentFailure(down, structuredClone(body), [], true)?.code).toBe('unreachable');
    expect(
      currentFailure(
        down,
        edit((b) => {
          b.name = 'x';
        }),
        [],
        true,
      ),
    ).toBeNull();
  });
});

describe('fieldLabel', () => {
  const saved = {
    steps: [
      { name: 'prep', type: 'set' },
      {
        name: 'route',
        type: 'switch',
        cases: [{ equals: 'push', steps: [{ name: 'a' }, { name: 'b' }, { name: 'notify' }] }],
      },
    ],
  };
  it.each([
    ['/name', 'Name'],
    ['/trigger/path', 'Path'],
    ['/trigger/auth/secret', 'Authentication › secret'],
    ['/steps/0', 'Step 1'],
    ['/steps/1/cases/0/steps/2/url', 'Step 2 › case 1 › step 3 › url'],
    ['/steps/0/fields/0', 'Step 1 › field 1'],
    ['/steps/3/then/0/headers/x~1y', 'Step 4 › then step 1 › headers › x/y'],
    ['/settings/searchFields/1', 'Settings › search field 2'],
  ])('counts %s from 1: %s', (pointer, label) => {
    expect(fieldLabel(pointer)).toBe(label);
  });

  it('names steps as they were saved', () => {
    expect(fieldLabel('/steps/1/cases/0/steps/2/url', saved)).toBe(
      'Step 2 (route) › case 1 › step 3 (notify) › url',
    );
  });
});
