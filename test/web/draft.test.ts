import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizePath } from '../../src/shared/path.js';
import type { FieldProblem } from '../../web/src/api.js';
import { render } from '../../web/src/lib/expressions.js';
import {
  authDefaults,
  bodyToText,
  cleanAuth,
  type Draft,
  type Drafts,
  draftFrom,
  newKey,
  newStep,
  normalizedPath,
  pathProblem,
  payloadFrom,
  row,
  STEP_TYPES,
  type StepDraft,
  stepDraftFrom,
  stepFrom,
  textToBody,
  type RawDraft,
  type TriggerDraft,
  triggerFrom,
  webhookFrom,
  valueToText,
} from '../../web/src/lib/draft.js';
import { httpUrlProblem } from '../../web/src/lib/steps/http.js';
import { looksLikeJson, quoteExpressions } from '../../web/src/lib/steps/values.js';
import type { AuthConfig, Step, Workflow } from '../../web/src/types.js';

function workflow(overrides: Partial<Workflow> = {}): Workflow {
  return {
    id: 'wf-1',
    name: 'Orders',
    active: false,
    version: 3,
    publishedVersion: null,
    trigger: {
      type: 'webhook',
      methods: ['POST', 'PUT'],
      path: 'orders/:id',
      auth: { type: 'basic', username: 'ann', password: '***' },
      response: { mode: 'immediately', status: 202, body: { ok: true } },
      options: {
        maxBodyBytes: 1024,
        allowedOrigins: ['https://a.example', 'https://b.example'],
        ipAllowlist: ['10.0.0.0/8'],
        rateLimit: { requests: 10, perSeconds: 60 },
        idempotency: { header: 'Idempotency-Key', windowSeconds: 3600 },
        schemaCheck: 'warn',
      },
      testUrl: 'http://localhost:3000/webhook-test/orders/:id',
      productionUrl: 'http://localhost:3000/webhook/orders/:id',
    },
    steps: [
      {
        name: 'shape',
        type: 'set',
        fields: { 'customer.name': '{{ body.name }}', total: '{{ 40 + 2 }}' },
        keepInput: true,
      },
      { name: 'only big', type: 'filter', condition: '{{ total > 10 }}' },
      {
        name: 'notify',
        type: 'http',
        method: 'POST',
        url: 'https://hooks.example/{{ params.id }}',
        headers: { 'x-key': 'k' },
        query: { q: '1' },
        body: { id: '{{ params.id }}' },
        timeoutMs: 5000,
        failOnError: false,
        retries: 2,
      },
      { name: 'answer', type: 'respond', status: 201, headers: { 'x-done': 'yes' }, body: 'done' },
      { name: 'custom', type: 'code', source: 'return 1', options: { fast: true } },
    ],
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** A draft's form rows without their generated keys. */
const pairs = (rows: { name: string; value: string }[]) => rows.map((r) => [r.name, r.value]);

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function triggerDraft(overrides: Partial<TriggerDraft> = {}): TriggerDraft {
  return {
    type: 'webhook',
    cron: '',
    timezone: 'UTC',
    missed: 'runOnce',
    methods: ['POST'],
    path: 'orders',
    auth: { type: 'none' },
    responseMode: 'immediately',
    responseStatus: '',
    responseNoContent: false,
    responseBody: '',
    responseTimeoutMs: '',
    responseSandbox: true,
    maxBodyBytes: '',
    allowedOrigins: '',
    ipAllowlist: '',
    rateRequests: '',
    ratePerSeconds: '',
    idempotencyHeader: '',
    idempotencyKey: '',
    idempotencyWindow: '',
    schemaCheck: 'off',
    handshake: '',
    handshakeToken: '',
    alertWorkflowId: '',
    alertSilenceMinutes: '',
    alertRejectionsPerMinute: '',
    alertSchemaDrift: false,
    ...overrides,
  };
}

function stepOf(step: Step): { step: Step; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  return { step: stepFrom(stepDraftFrom(step), 0, problems), problems };
}

describe('keys and rows', () => {
  it('newKey gives a different key each time', () => {
    const keys = new Set(Array.from({ length: 50 }, newKey));
    expect(keys.size).toBe(50);
  });

  it('row makes a keyed name and value, empty by default', () => {
    expect(row()).toEqual({ key: expect.any(String), name: '', value: '' });
    expect(row('a', 'b')).toMatchObject({ name: 'a', value: 'b' });
    expect(row().key).not.toBe(row().key);
  });
});

describe('valueToText', () => {
  it('keeps strings and makes other JSON a typed expression', () => {
    expect(valueToText('text {{ x }}')).toBe('text {{ x }}');
    expect(valueToText('')).toBe('');
    expect(valueToText(undefined)).toBe('');
    expect(valueToText(42)).toBe('{{ 42 }}');
    expect(valueToText(false)).toBe('{{ false }}');
    expect(valueToText(null)).toBe('{{ null }}');
    expect(valueToText({ a: [1, 'x'] })).toBe('{{ {"a":[1,"x"]} }}');
  });
});

describe('bodyToText and textToBody', () => {
  it('shows objects and arrays as indented JSON and strings as they are', () => {
    expect(bodyToText(undefined)).toBe('');
    expect(bodyToText('hello {{ name }}')).toBe('hello {{ name }}');
    expect(bodyToText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(bodyToText([1])).toBe('[\n  1\n]');
  });

  it('reads JSON objects and arrays back as JSON, with expressions inside their strings', () => {
    expect(textToBody('  {"a": "{{ x }}", "b": [1]}  ')).toEqual({ a: '{{ x }}', b: [1] });
    expect(textToBody('[1, 2]')).toEqual([1, 2]);
  });

  it('reads blank text as no body', () => {
    expect(textToBody('')).toBeUndefined();
    expect(textToBody(' \n\t ')).toBeUndefined();
  });

  it('keeps other text, an expression and JSON that does not parse as text, untrimmed', () => {
    expect(textToBody('{{ $ }}')).toBe('{{ $ }}');
    expect(textToBody('{{ {"a": 1} }}')).toBe('{{ {"a": 1} }}');
    expect(textToBody(' plain ')).toBe(' plain ');
    expect(textToBody('{ oops ')).toBe('{ oops ');
    expect(textToBody('{"a": {{ x }} oops}')).toBe('{"a": {{ x }} oops}');
    expect(textToBody(' {{ x }} and {{ y }} ')).toBe(' {{ x }} and {{ y }} ');
  });

  it('takes an expression where a JSON value goes, unquoted as the field picker inserts it, as a string holding it', () => {
    expect(textToBody('[{{ x }}]')).toEqual(['{{ x }}']);
    expect(
      textToBody('{"repo": {{ $steps.set.repo }}, "n": {{ $count(body.commits) }}, "s": "a {{ b }}"}'),
    ).toEqual({
      repo: '{{ $steps.set.repo }}',
      n: '{{ $count(body.commits) }}',
      s: 'a {{ b }}',
    });
    // Quotes and braces inside strings are the strings'.
    expect(textToBody('{"q": "say \\"{{ hi }}\\"", "v": {{ v }}}')).toEqual({
      q: 'say "{{ hi }}"',
      v: '{{ v }}',
    });
    expect(quoteExpressions('{"a": {{ x }}}')).toBe('{"a": "{{ x }}"}');
  });

  it('gives back any object or array it showed', () => {
    const container = fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()));
    fc.assert(
      fc.property(container, (value) => {
        expect(textToBody(bodyToText(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('gives back any text that is not JSON, as typed', () => {
    const text = fc
      .string()
      .filter((s) => s.trim() !== '' && !isJson(s) && !(looksLikeJson(s) && isJson(quoteExpressions(s))));
    fc.assert(
      fc.property(text, (value) => {
        expect(textToBody(value)).toBe(value);
        expect(bodyToText(value)).toBe(value);
      }),
    );
  });

  it.each([
    ['42', 42],
    [' -1.5 ', -1.5],
    ['true', true],
    ['false', false],
    ['null', null],
    ['"quoted"', 'quoted'],
    ['""', ''],
  ])('reads text that is one JSON value, %j, as that value', (text, value) => {
    expect(textToBody(text)).toEqual(value);
  });

  it('keeps a number JSON cannot carry as text', () => {
    expect(textToBody('1e999')).toBe('1e999');
    expect(bodyToText('1e999')).toBe('1e999');
  });

  it.each([
    [42, '42'],
    [true, 'true'],
    [null, 'null'],
    ['42', '"42"'],
    ['null', '"null"'],
    ['', '""'],
    [' \n ', '" \\n "'],
    ['{"a":1}', '"{\\"a\\":1}"'],
    ['"q"', '"\\"q\\""'],
  ])('shows %j as %s, which reads back as the same value', (value, text) => {
    expect(bodyToText(value)).toBe(text);
    expect(textToBody(text)).toEqual(value);
  });

  it('gives back any JSON value it showed, strings and scalars included', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(textToBody(bodyToText(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('stepDraftFrom', () => {
  it('fills the set form', () => {
    const d = stepDraftFrom({
      name: 'shape',
      type: 'set',
      fields: { a: '{{ x }}', n: 42 },
      keepInput: true,
    }) as Drafts['set'];
    expect(d).toMatchObject({ name: 'shape', type: 'set', keepInput: true, extra: {} });
    expect(d).not.toHaveProperty('raw');
    expect(pairs(d.fields)).toEqual([
      ['a', '{{ x }}'],
      ['n', '{{ 42 }}'],
    ]);
  });

  it('fills the http form, with defaults for what is missing', () => {
    const full = stepDraftFrom(workflow().steps[2]!) as Drafts['http'];
    expect(full).toMatchObject({
      method: 'POST',
      url: 'https://hooks.example/{{ params.id }}',
      timeoutMs: '5000',
      failOnError: false,
      body: '{\n  "id": "{{ params.id }}"\n}',
      extra: { retries: 2 },
    });
    expect(pairs(full.headers)).toEqual([['x-key', 'k']]);
    expect(pairs(full.query)).toEqual([['q', '1']]);
    const bare = stepDraftFrom({ name: 'h', type: 'http' });
    expect(bare).toMatchObject({
      method: 'GET',
      url: '',
      timeoutMs: '',
      failOnError: true,
      body: '',
      headers: [],
    });
  });

  it('fills the filter and respond forms', () => {
    expect(
      (stepDraftFrom({ name: 'f', type: 'filter', condition: true }) as Drafts['filter']).condition,
    ).toBe('{{ true }}');
    expect(stepDraftFrom({ name: 'r', type: 'respond', status: 201, body: 'done' })).toMatchObject({
      status: '201',
      body: 'done',
    });
  });

  it('keeps a step type it has no form for as JSON text', () => {
    const d = stepDraftFrom({ name: 'c', type: 'sendEmail', source: 'x', n: 1 }) as RawDraft;
    expect(JSON.parse(d.raw)).toEqual({ source: 'x', n: 1 });
    expect(d.extra).toEqual({});
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'keeps a step type named %s as JSON text, like any type it has no form for',
    (type) => {
      const step = { name: 'c', type, source: 'x' };
      const d = stepDraftFrom(step) as RawDraft;
      expect(JSON.parse(d.raw)).toEqual({ source: 'x' });
      const problems: FieldProblem[] = [];
      expect(stepFrom(d, 0, problems)).toEqual(step);
      expect(problems).toEqual([]);
    },
  );

  it('ignores lists that are not objects', () => {
    const d = stepDraftFrom({ name: 'h', type: 'http', headers: ['a'], query: null }) as Drafts['http'];
    expect(d.headers).toEqual([]);
    expect(d.query).toEqual([]);
    const set = stepDraftFrom({ name: 's', type: 'set', fields: 'x' }) as Drafts['set'];
    expect(set.fields).toEqual([]);
  });
});

describe('stepFrom', () => {
  it('gives back the steps of a saved workflow unchanged', () => {
    for (const step of workflow().steps) {
      const { step: back, problems } = stepOf(step);
      expect(problems).toEqual([]);
      expect(back).toEqual(step);
    }
  });

  it.each([42, true, false, null, 0, '42', 'true', 'null', '', ' ', '{"a": 1}', '[1]'])(
    'gives back a body of %j unchanged, for respond and http steps',
    (body) => {
      for (const step of [
        { name: 'r', type: 'respond', body },
        { name: 'h', type: 'http', method: 'POST', url: 'https://x.example', body },
      ]) {
        const { step: back, problems } = stepOf(step);
        expect(problems).toEqual([]);
        expect(back).toEqual(step);
      }
    },
  );

  it('gives back field values that are not strings as expressions of the same value', async () => {
    const fields = { n: 42, flag: false, none: null, obj: { a: [1, 'x'] } };
    const { step, problems } = stepOf({ name: 's', type: 'set', fields });
    expect(problems).toEqual([]);
    expect(step.fields).toEqual({
      n: '{{ 42 }}',
      flag: '{{ false }}',
      none: '{{ null }}',
      obj: '{{ {"a":[1,"x"]} }}',
    });
    const scope = {
      input: {},
      trigger: {},
      steps: {},
      execution: { id: 'e', mode: 'test', workflowId: 'w', attempt: 1 },
    };
    expect(await render(step.fields, scope)).toEqual(fields);
  });

  it('trims the step name and needs one', () => {
    const d = stepDraftFrom({ name: 'x', type: 'filter', condition: '{{ a }}' });
    const problems: FieldProblem[] = [];
    expect(stepFrom({ ...d, name: '  spaced  ' }, 0, problems).name).toBe('spaced');
    expect(stepFrom({ ...d, name: '   ' }, 4, problems).name).toBe('');
    expect(problems).toEqual([{ field: '/steps/4/name', message: 'needs a name' }]);
  });

  describe('set', () => {
    const set = (fields: [string, string][], keepInput = false) => {
      const d: StepDraft = { ...newStep('set', []), fields: fields.map(([n, v]) => row(n, v)), keepInput };
      const problems: FieldProblem[] = [];
      return { step: stepFrom(d, 2, problems), problems };
    };

    it('keeps named fields with trimmed names and skips blank rows', () => {
      expect(
        set([
          [' a ', '1'],
          ['', ''],
          ['b', '{{ x }}'],
        ]),
      ).toEqual({
        step: { name: 'set', type: 'set', fields: { a: '1', b: '{{ x }}' } },
        problems: [],
      });
    });

    it('sends keepInput only when on, and empty fields as {}', () => {
      expect(set([], true).step).toEqual({ name: 'set', type: 'set', fields: {}, keepInput: true });
    });

    it('reports a value without a name and a name set twice', () => {
      const { step, problems } = set([
        ['a', '1'],
        ['', 'orphan'],
        [' a', '2'],
      ]);
      expect(problems).toEqual([
        { field: '/steps/2/fields/1', message: 'has a value but no field name' },
        { field: '/steps/2/fields/2', message: 'sets "a" twice' },
      ]);
      expect(step.fields).toEqual({ a: '2' });
    });

    it('reports reserved field names as the server does, and keeps __proto__ in the payload', () => {
      const { step, problems } = set([
        ['__proto__', '1'],
        ['a.constructor', '2'],
        [' prototype ', '3'],
        ['ok', '4'],
      ]);
      const message = 'uses a reserved name (__proto__, prototype, constructor)';
      expect(problems).toEqual([
        { field: '/steps/2/fields/0', message },
        { field: '/steps/2/fields/1', message },
        { field: '/steps/2/fields/2', message },
      ]);
      // Kept as an own key (not dropped by an assignment to the prototype), so the draft differs
      // from the saved workflow and Save shows the problem.
      expect(Object.getPrototypeOf(step.fields)).toBe(Object.prototype);
      expect(Object.keys(step.fields as object)).toEqual(['__proto__', 'a.constructor', 'prototype', 'ok']);
      expect(JSON.stringify(step.fields)).toBe(
        '{"__proto__":"1","a.constructor":"2","prototype":"3","ok":"4"}',
      );
    });
  });

  describe('filter', () => {
    it('needs a condition', () => {
      const problems: FieldProblem[] = [];
      const step = stepFrom({ ...newStep('filter', []), condition: '  ' }, 1, problems);
      expect(step).toEqual({ name: 'filter', type: 'filter', condition: '  ' });
      expect(problems).toEqual([{ field: '/steps/1/condition', message: 'needs a condition' }]);
    });
  });

  describe('http', () => {
    const http = (patch: Partial<Drafts['http']>) => stepFrom({ ...newStep('http', []), ...patch }, 0, []);

    it('sends method and url always and the rest only when given', () => {
      expect(http({ url: 'https://example.com' })).toEqual({
        name: 'http',
        type: 'http',
        method: 'POST',
        url: 'https://example.com',
      });
    });

    it('starts with an empty URL, which Save asks to fill in', () => {
      const problems: FieldProblem[] = [];
      stepFrom(newStep('http', []), 0, problems);
      expect(problems).toEqual([{ field: '/steps/0/url', message: 'needs a URL (http:// or https://)' }]);
    });

    it.each([
      ['https://example.com/hook', undefined],
      ['http://127.0.0.1:8080/x?y=1', undefined],
      ['{{ $trigger.body.callback }}', undefined],
      ['https://{{ body.host }}/api', undefined],
      ['https://api.example.com/{{ body.id }}', undefined],
      ['https://http://example.com', 'has the scheme twice ("https://http://…")'],
      ['example.com/api', 'must start with http:// or https://'],
      ['ftp://example.com', 'must start with http:// or https://'],
      ['example.com/{{ body.id }}', 'must start with http:// or https://'],
      ['https://', 'is not a valid URL'],
      ['https://user:pw@example.com', 'must not carry a user name or password: use a credential instead'],
      ['', 'needs a URL (http:// or https://)'],
    ])('checks the URL %j on save', (url, problem) => {
      expect(httpUrlProblem(url)).toBe(problem);
    });

    it.each([['h'], ['htt'], ['https:/'], ['']])('lets %j be typed without a problem yet', (url) => {
      expect(httpUrlProblem(url, true)).toBeUndefined();
    });

    it('sends a whole-number timeout as a number and anything else as typed', () => {
      expect(http({ timeoutMs: ' 2500 ' }).timeoutMs).toBe(2500);
      expect(http({ timeoutMs: '{{ $.t }}' }).timeoutMs).toBe('{{ $.t }}');
      expect(http({ timeoutMs: '1.5' }).timeoutMs).toBe('1.5');
      expect(http({ timeoutMs: ' ' })).not.toHaveProperty('timeoutMs');
    });

    it('sends a JSON body as an object (sent as application/json); JSON that does not parse is refused unless a content type says text', () => {
      expect(http({ url: 'https://x.example', body: '{"n": {{ $count(body.items) }}}' }).body).toEqual({
        n: '{{ $count(body.items) }}',
      });
      const problems: FieldProblem[] = [];
      const broken = { ...newStep('http', []), url: 'https://x.example', body: '{"n": {{ x }} oops}' };
      expect(stepFrom(broken, 0, problems).body).toBe('{"n": {{ x }} oops}');
      expect(problems).toEqual([
        {
          field: '/steps/0/body',
          message:
            'looks like JSON but is not (it would be sent as text/plain): fix it, or add a content-type header to send it as text',
        },
      ]);
      const asText: FieldProblem[] = [];
      stepFrom({ ...broken, headers: [row('Content-Type', 'text/plain')] }, 0, asText);
      expect(asText).toEqual([]);
      const text: FieldProblem[] = [];
      stepFrom({ ...broken, body: 'Hello {{ name }}' }, 0, text);
      expect(text).toEqual([]);
    });

    it('sends failOnError only when off', () => {
      expect(http({ failOnError: false }).failOnError).toBe(false);
      expect(http({ failOnError: true })).not.toHaveProperty('failOnError');
    });

    it('reports a header or query parameter named __proto__, which the API would drop', () => {
      const problems: FieldProblem[] = [];
      const step = stepFrom(
        {
          ...newStep('http', []),
          url: 'https://example.com',
          headers: [row('a', '1'), row(' __proto__ ', 'h')],
          query: [row('__proto__', 'q')],
        },
        1,
        problems,
      );
      expect(problems).toEqual([
        { field: '/steps/1/headers/1', message: 'uses the reserved name "__proto__"' },
        { field: '/steps/1/query/0', message: 'uses the reserved name "__proto__"' },
      ]);
      // Still in the payload as an own key, so the edit is not silently lost before Save.
      expect(JSON.stringify(step.headers)).toBe('{"a":"1","__proto__":"h"}');
      expect(JSON.stringify(step.query)).toBe('{"__proto__":"q"}');
    });

    it('sends headers, query and a JSON body from the form', () => {
      expect(
        http({ headers: [row('a', '1'), row(' ', 'x')], query: [row('q', 'v')], body: '{"x": "{{ y }}"}' }),
      ).toMatchObject({ headers: { a: '1' }, query: { q: 'v' }, body: { x: '{{ y }}' } });
    });
  });

  describe('respond', () => {
    const respond = (patch: Partial<Drafts['respond']>) =>
      stepFrom({ ...newStep('respond', []), ...patch }, 0, []);

    it('sends nothing but the name when the form is empty', () => {
      expect(respond({})).toEqual({ name: 'respond', type: 'respond' });
    });

    it('reports a header named __proto__, which the API would drop', () => {
      const problems: FieldProblem[] = [];
      const step = stepFrom({ ...newStep('respond', []), headers: [row('__proto__', 'x')] }, 0, problems);
      expect(problems).toEqual([
        { field: '/steps/0/headers/0', message: 'uses the reserved name "__proto__"' },
      ]);
      expect(JSON.stringify(step.headers)).toBe('{"__proto__":"x"}');
    });

    it('sends a numeric status as a number and an expression as text', () => {
      expect(respond({ status: '204' }).status).toBe(204);
      expect(respond({ status: '{{ code }}' }).status).toBe('{{ code }}');
    });
  });

  describe('other types', () => {
    const other = (raw: string) => {
      const problems: FieldProblem[] = [];
      const d: StepDraft = { ...stepDraftFrom({ name: 'c', type: 'sendEmail' }), raw };
      return { step: stepFrom(d, 3, problems), problems };
    };

    it('sends the JSON object of the raw text, never changing name and type', () => {
      expect(other('{"source": "x", "name": "evil", "type": "set"}')).toEqual({
        step: { name: 'c', type: 'sendEmail', source: 'x' },
        problems: [],
      });
      expect(other('  ').step).toEqual({ name: 'c', type: 'sendEmail' });
    });

    it('reports raw text that is not a JSON object', () => {
      for (const raw of ['[1]', 'null', '42', '{oops']) {
        expect(other(raw).problems).toEqual([{ field: '/steps/3/raw', message: 'is not a JSON object' }]);
      }
    });
  });
});

describe('newStep', () => {
  it('names a new step after its type, numbering it when the name is taken', () => {
    expect(newStep('set', []).name).toBe('set');
    const existing = [newStep('set', []), { ...newStep('set', []), name: 'set2' }, newStep('http', [])];
    expect(newStep('set', existing).name).toBe('set3');
    expect(newStep('http', existing).name).toBe('http2');
    expect(newStep('filter', existing).name).toBe('filter');
  });

  it('starts each form with what it needs', () => {
    expect(pairs(newStep('set', []).fields)).toEqual([['', '']]);
    expect(newStep('filter', []).condition).toBe('');
    expect(newStep('http', [])).toMatchObject({ method: 'POST', url: '' });
    expect(newStep('respond', [])).toMatchObject({ status: '', body: '', headers: [] });
  });

  it('has a form for every listed step type', () => {
    expect(STEP_TYPES.map((t) => t.type)).toEqual([
      'set',
      'filter',
      'http',
      'email',
      'respond',
      'if',
      'switch',
      'forEach',
      'code',
      'wait',
      'fail',
      'sql',
      'store',
      'workflow',
    ]);
    for (const { type } of STEP_TYPES) expect(newStep(type, [])).not.toHaveProperty('raw');
  });
});

describe('the wait step form (SPEC 7g)', () => {
  it.each<Step>([
    { name: 'approval', type: 'wait', for: 'call', timeoutSeconds: 86400 },
    { name: 'approval', type: 'wait', for: 'call' },
    {
      name: 'paid',
      type: 'wait',
      for: 'event',
      workflowId: 'wf-stripe',
      match: '{{ body.data.object.id }}',
      equals: '{{ $trigger.body.id }}',
      timeoutSeconds: '{{ body.ttl }}',
    },
    { name: 'pause', type: 'wait', seconds: 30 },
    { name: 'later', type: 'wait', until: '{{ body.at }}' },
  ])('keeps a stored $for wait as it was', (stored) => {
    expect(stepOf(stored)).toEqual({ step: stored, problems: [] });
  });

  it('asks for the workflow, the match and the value of an event wait', () => {
    const { problems } = stepOf({ name: 'paid', type: 'wait', for: 'event' });
    expect(problems.map((p) => p.field)).toEqual([
      '/steps/0/workflowId',
      '/steps/0/match',
      '/steps/0/equals',
    ]);
  });
});

describe('the email step form', () => {
  it('keeps a stored email step as it was (addresses as text, attachments, retry, failOnRejected)', () => {
    const stored: Step = {
      name: 'receipt',
      type: 'email',
      credential: 'c1',
      to: ['a@example.com', '{{ body.email }}'],
      bcc: 'Books <books@example.com>',
      subject: 'Receipt {{ body.id }}',
      text: 'Thanks',
      attachments: ['{{ $trigger.files[0] }}'],
      failOnRejected: false,
      retry: { attempts: 3, on: ['network', '4xx', '5xx'] },
    };
    const problems: FieldProblem[] = [];
    const back = stepFrom(stepDraftFrom(stored), 0, problems);
    expect(problems).toEqual([]);
    expect(back).toEqual({ ...stored, to: 'a@example.com, {{ body.email }}' });
  });

  it('a new one needs a credential and a recipient; retry on is left to the server unless changed', () => {
    const problems: FieldProblem[] = [];
    const step = stepFrom({ ...newStep('email', []), retryAttempts: '3' }, 0, problems);
    expect(problems.map((p) => p.field)).toEqual(['/steps/0/credential', '/steps/0/to']);
    expect(step.retry).toEqual({ attempts: 3 });
  });
});

describe('cleanAuth', () => {
  it('keeps only the keys of the auth kind, without empty ones', () => {
    const all: AuthConfig = {
      type: 'basic',
      username: 'ann',
      password: '',
      name: 'n',
      value: 'v',
      secret: 's',
      preset: 'github',
    };
    expect(cleanAuth(all)).toEqual({ type: 'basic', username: 'ann' });
    expect(cleanAuth({ ...all, type: 'header' })).toEqual({ type: 'header', name: 'n', value: 'v' });
    expect(cleanAuth({ ...all, type: 'none' })).toEqual({ type: 'none' });
  });

  it('keeps the secret for HS256 JWTs and the public key for the others', () => {
    const jwt: AuthConfig = {
      type: 'jwt',
      secret: 's',
      publicKey: 'pem',
      issuer: 'i',
      audience: 'a',
      value: 'x',
    };
    expect(cleanAuth({ ...jwt, algorithm: 'HS256' })).toEqual({
      type: 'jwt',
      algorithm: 'HS256',
      secret: 's',
      issuer: 'i',
      audience: 'a',
    });
    expect(cleanAuth({ ...jwt, algorithm: 'RS256' })).toEqual({
      type: 'jwt',
      algorithm: 'RS256',
      publicKey: 'pem',
      issuer: 'i',
      audience: 'a',
    });
  });

  it('sends a JWT config without an algorithm as HS256, keeping its secret', () => {
    // The form shows a missing algorithm as HS256 (and asks for the secret); the server needs one.
    expect(cleanAuth({ type: 'jwt', secret: 's', publicKey: 'pem', issuer: 'i' })).toEqual({
      type: 'jwt',
      algorithm: 'HS256',
      secret: 's',
      issuer: 'i',
    });
    expect(cleanAuth({ type: 'jwt', secret: '***' })).toEqual({
      type: 'jwt',
      algorithm: 'HS256',
      secret: '***',
    });
  });

  it('keeps the signature settings of a custom HMAC only', () => {
    const hmac: AuthConfig = {
      type: 'hmac',
      secret: '***',
      header: 'X-Sig',
      algorithm: 'sha1',
      encoding: 'base64',
      prefix: 'sha1=',
      toleranceSeconds: 300,
      username: 'u',
    };
    expect(cleanAuth({ ...hmac, preset: 'custom' })).toEqual({
      ...hmac,
      preset: 'custom',
      username: undefined,
    });
    expect(cleanAuth({ ...hmac, preset: 'custom' })).not.toHaveProperty('username');
    expect(cleanAuth({ ...hmac, preset: 'stripe' })).toEqual({
      type: 'hmac',
      preset: 'stripe',
      secret: '***',
      toleranceSeconds: 300,
    });
  });
});

describe('authDefaults', () => {
  it('gives an empty form of each auth kind', () => {
    expect(authDefaults('none')).toEqual({ type: 'none' });
    expect(authDefaults('basic')).toEqual({ type: 'basic', username: '', password: '' });
    expect(authDefaults('header')).toEqual({ type: 'header', name: 'Authorization', value: '' });
    expect(authDefaults('jwt')).toEqual({ type: 'jwt', algorithm: 'HS256', secret: '' });
    expect(authDefaults('hmac')).toEqual({ type: 'hmac', preset: 'github', secret: '' });
  });
});

describe('pathProblem and normalizedPath', () => {
  it('take a path with the server rules, without its outer slashes', () => {
    expect(pathProblem('/orders/:id/')).toBeUndefined();
    expect(normalizedPath('/orders/:id/')).toBe('orders/:id');
  });

  it('take the path as triggerFrom sends it, without surrounding whitespace', () => {
    expect(pathProblem(' orders ')).toBeUndefined();
    expect(pathProblem('\t/orders/:id/ \n')).toBeUndefined();
    expect(normalizedPath(' /orders/ ')).toBe('orders');
    expect(pathProblem(' a b ')).toMatch(/^The path segment "a b" is invalid/);
    expect(pathProblem('  ')).toBe('The path is empty: give at least one segment.');
  });

  it('agree with what the server makes of the path triggerFrom sends', () => {
    const path = fc.string({ unit: fc.constantFrom('a', 'b', '/', ' ', '\t', ':', '_', '.'), maxLength: 10 });
    fc.assert(
      fc.property(path, (p) => {
        const problems: FieldProblem[] = [];
        const sent = webhookFrom(triggerDraft({ path: p }), problems).path;
        const server = normalizePath(sent);
        expect(pathProblem(p)).toBe(server.ok ? undefined : server.error);
        expect(normalizedPath(p)).toBe(server.ok ? server.path : undefined);
        expect(problems.some((x) => x.field === '/trigger/path')).toBe(!server.ok);
      }),
      { numRuns: 500 },
    );
  });

  it('explain a path the server would refuse', () => {
    expect(pathProblem('')).toBe('The path is empty: give at least one segment.');
    expect(pathProblem('a//b')).toBe('The path contains an empty segment (two slashes in a row).');
    expect(pathProblem('a/:id/:id')).toBe('The path parameter ":id" appears more than once.');
    expect(pathProblem('a b')).toMatch(/^The path segment "a b" is invalid/);
    expect(normalizedPath('a b')).toBeUndefined();
    expect(normalizedPath('/')).toBeUndefined();
  });
});

describe('triggerFrom', () => {
  const from = (patch: Partial<TriggerDraft>) => {
    const problems: FieldProblem[] = [];
    return { trigger: triggerFrom(triggerDraft(patch), problems), problems };
  };

  it('sends a minimal trigger for an empty form', () => {
    expect(from({ path: 'orders' })).toEqual({
      trigger: {
        methods: ['POST'],
        path: 'orders',
        auth: { type: 'none' },
        response: { mode: 'immediately' },
        options: {},
      },
      problems: [],
    });
  });

  it('sends a path with surrounding whitespace trimmed, without a problem', () => {
    expect(from({ path: ' orders ' })).toMatchObject({ trigger: { path: 'orders' }, problems: [] });
  });

  it('needs a method and a valid path', () => {
    expect(from({ methods: [], path: '' }).problems).toEqual([
      { field: '/trigger/methods', message: 'needs at least one method' },
      { field: '/trigger/path', message: 'The path is empty: give at least one segment.' },
    ]);
  });

  describe('response', () => {
    it('sends the status and body of an immediate response', () => {
      expect(from({ responseStatus: '202', responseBody: '{"ok": true}' }).trigger.response).toEqual({
        mode: 'immediately',
        status: 202,
        body: { ok: true },
      });
    });

    it('sends noContent instead of status and body', () => {
      const { trigger, problems } = from({
        responseNoContent: true,
        responseStatus: 'oops',
        responseBody: 'x',
      });
      expect(trigger.response).toEqual({ mode: 'immediately', noContent: true });
      expect(problems).toEqual([]);
    });

    it('takes only 2xx statuses, as whole numbers', () => {
      expect(from({ responseStatus: '404' }).problems).toEqual([
        { field: '/trigger/response/status', message: 'must be between 200 and 299' },
      ]);
      expect(from({ responseStatus: '199' }).problems).toHaveLength(1);
      expect(from({ responseStatus: '299' }).problems).toEqual([]);
      for (const status of ['abc', '0', '-1', '2.5', '1e3']) {
        expect(from({ responseStatus: status })).toMatchObject({
          trigger: { response: { mode: 'immediately' } },
          problems: [{ field: '/trigger/response/status', message: 'must be a whole number above 0' }],
        });
      }
    });

    it('sends the timeout of a last-step response and ignores the immediate settings', () => {
      expect(
        from({ responseMode: 'lastStep', responseTimeoutMs: '30000', responseStatus: '201' }).trigger
          .response,
      ).toEqual({ mode: 'lastStep', timeoutMs: 30000 });
      expect(from({ responseMode: 'lastStep', responseTimeoutMs: 'soon' }).problems).toEqual([
        { field: '/trigger/response/timeoutMs', message: 'must be a whole number above 0' },
      ]);
      expect(from({ responseMode: 'respondStep', responseTimeoutMs: '5' }).trigger.response).toEqual({
        mode: 'respondStep',
      });
    });

    it('sends sandbox: false only when the sandbox is turned off, whatever the mode', () => {
      expect(from({ responseMode: 'respondStep' }).trigger.response).toEqual({ mode: 'respondStep' });
      for (const responseMode of ['immediately', 'lastStep', 'respondStep'] as const) {
        expect(from({ responseMode, responseSandbox: false }).trigger.response).toMatchObject({
          mode: responseMode,
          sandbox: false,
        });
      }
    });
  });

  describe('handshake', () => {
    it('sends the provider, and the token only for the providers that need one', () => {
      expect(from({ handshake: 'slack', handshakeToken: 'left over' })).toMatchObject({
        trigger: { handshake: 'slack' },
        problems: [],
      });
      expect(from({ handshake: 'slack', handshakeToken: 'left over' }).trigger).not.toHaveProperty(
        'handshakeToken',
      );
      expect(from({ handshake: 'zoom', handshakeToken: 's3cret' })).toMatchObject({
        trigger: { handshake: 'zoom', handshakeToken: 's3cret' },
        problems: [],
      });
      // A saved token is sent back as the mask, which keeps it.
      expect(from({ handshake: 'meta', handshakeToken: '***' }).trigger.handshakeToken).toBe('***');
      expect(from({}).trigger).not.toHaveProperty('handshake');
    });

    it("asks for Meta's verify token and Zoom's secret token under their field", () => {
      expect(from({ handshake: 'meta' }).problems).toEqual([
        { field: '/trigger/handshakeToken', message: "needs Meta's verify token" },
      ]);
      expect(from({ handshake: 'zoom' }).problems).toEqual([
        { field: '/trigger/handshakeToken', message: "needs your Zoom app's secret token" },
      ]);
    });
  });

  describe('alerts', () => {
    it('sends the alert workflow with the conditions set, and none without one', () => {
      expect(
        from({ alertWorkflowId: 'wf-1', alertSilenceMinutes: '60', alertSchemaDrift: true }),
      ).toMatchObject({
        trigger: { alerts: { workflowId: 'wf-1', silenceMinutes: 60, schemaDrift: true } },
        problems: [],
      });
      expect(from({ alertSilenceMinutes: '60' }).trigger).not.toHaveProperty('alerts');
    });

    it('asks for a condition, and whole numbers', () => {
      expect(from({ alertWorkflowId: 'wf-1' }).problems).toEqual([
        {
          field: '/trigger/alerts',
          message: 'says when to alert: a silence, a rate of refusals, or schema drift',
        },
      ]);
      expect(
        from({ alertWorkflowId: 'wf-1', alertRejectionsPerMinute: 'x', alertSchemaDrift: true }).problems,
      ).toEqual([
        { field: '/trigger/alerts/rejectionsPerMinute', message: 'must be a whole number above 0' },
      ]);
    });
  });

  describe('options', () => {
    it('sends every option set in the form', () => {
      const { trigger, problems } = from({
        maxBodyBytes: ' 2048 ',
        allowedOrigins: 'https://a.example,\n https://b.example \n\n',
        ipAllowlist: '10.0.0.1, 192.168.0.0/16',
        rateRequests: '10',
        ratePerSeconds: '60',
        idempotencyHeader: ' Idempotency-Key ',
        idempotencyKey: ' {{ body.id }} ',
        idempotencyWindow: '3600',
        schemaCheck: 'reject',
      });
      expect(problems).toEqual([]);
      expect(trigger.options).toEqual({
        maxBodyBytes: 2048,
        allowedOrigins: ['https://a.example', 'https://b.example'],
        ipAllowlist: ['10.0.0.1', '192.168.0.0/16'],
        rateLimit: { requests: 10, perSeconds: 60 },
        idempotency: { header: 'Idempotency-Key', key: '{{ body.id }}', windowSeconds: 3600 },
        schemaCheck: 'reject',
      });
    });

    it('needs both halves of a rate limit', () => {
      const problem = {
        field: '/trigger/options/rateLimit',
        message: 'needs both a number of requests and a period',
      };
      expect(from({ rateRequests: '10' })).toMatchObject({ trigger: { options: {} }, problems: [problem] });
      expect(from({ ratePerSeconds: '10' }).problems).toEqual([problem]);
    });

    it('reports numbers that are not whole and above zero, under their own fields', () => {
      expect(
        from({ maxBodyBytes: '0', idempotencyWindow: 'x', rateRequests: '-5', ratePerSeconds: '1' }).problems,
      ).toEqual([
        { field: '/trigger/options/maxBodyBytes', message: 'must be a whole number above 0' },
        { field: '/trigger/options/rateLimit/requests', message: 'must be a whole number above 0' },
        { field: '/trigger/options/rateLimit', message: 'needs both a number of requests and a period' },
        { field: '/trigger/options/idempotency/windowSeconds', message: 'must be a whole number above 0' },
      ]);
    });

    it('leaves out blank lists and idempotency', () => {
      expect(from({ allowedOrigins: ' , \n ', idempotencyHeader: '  ' }).trigger.options).toEqual({});
    });
  });

  describe('auth', () => {
    const problemsOf = (auth: AuthConfig) => from({ auth }).problems;

    it('needs the credentials of basic auth', () => {
      expect(problemsOf({ type: 'basic', username: ' ', password: '' })).toEqual([
        { field: '/trigger/auth/username', message: 'needs a username' },
        { field: '/trigger/auth/password', message: 'needs a password' },
      ]);
      expect(problemsOf({ type: 'basic', username: 'ann', password: '***' })).toEqual([]);
    });

    it('needs a valid header name and a value for header auth', () => {
      expect(problemsOf({ type: 'header' })).toEqual([
        { field: '/trigger/auth/name', message: 'needs a header name' },
        { field: '/trigger/auth/value', message: 'needs the value callers must send' },
      ]);
      expect(problemsOf({ type: 'header', name: 'X Key', value: 'v' })).toEqual([
        { field: '/trigger/auth/name', message: 'is not a valid header name' },
      ]);
      expect(problemsOf({ type: 'header', name: "X-Key_1.~!#$%&'*+^`|", value: 'v' })).toEqual([]);
    });

    it('needs the secret of HS256 JWTs (the default) and the public key of the others', () => {
      expect(problemsOf({ type: 'jwt', algorithm: 'HS256' })).toEqual([
        { field: '/trigger/auth/secret', message: 'needs the shared secret' },
      ]);
      expect(problemsOf({ type: 'jwt' })).toEqual([
        { field: '/trigger/auth/secret', message: 'needs the shared secret' },
      ]);
      expect(problemsOf({ type: 'jwt', algorithm: 'ES256', secret: 's' })).toEqual([
        { field: '/trigger/auth/publicKey', message: 'needs the PEM public key' },
      ]);
    });

    it('sends the secret of a JWT config without an algorithm, as HS256', () => {
      expect(from({ auth: { type: 'jwt', secret: 's' } })).toMatchObject({
        trigger: { auth: { type: 'jwt', algorithm: 'HS256', secret: 's' } },
        problems: [],
      });
    });

    it('needs the secret of HMAC, and the header of a custom one', () => {
      expect(problemsOf({ type: 'hmac', preset: 'github' })).toEqual([
        { field: '/trigger/auth/secret', message: 'needs the signing secret' },
      ]);
      expect(problemsOf({ type: 'hmac', preset: 'custom', secret: 's' })).toEqual([
        { field: '/trigger/auth/header', message: 'needs the signature header name' },
      ]);
    });

    it('sends only the keys of the auth kind', () => {
      expect(
        from({ auth: { type: 'header', name: 'X-K', value: 'v', username: 'old' } }).trigger.auth,
      ).toEqual({
        type: 'header',
        name: 'X-K',
        value: 'v',
      });
    });
  });
});

describe('draftFrom and payloadFrom', () => {
  it('fill the form from a saved workflow', () => {
    const d = draftFrom(workflow());
    expect(d.name).toBe('Orders');
    expect(d.trigger).toEqual({
      type: 'webhook',
      cron: '',
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      missed: 'runOnce',
      methods: ['POST', 'PUT'],
      path: 'orders/:id',
      auth: { type: 'basic', username: 'ann', password: '***' },
      responseMode: 'immediately',
      responseStatus: '202',
      responseNoContent: false,
      responseBody: '{\n  "ok": true\n}',
      responseTimeoutMs: '',
      responseSandbox: true,
      maxBodyBytes: '1024',
      allowedOrigins: 'https://a.example\nhttps://b.example',
      ipAllowlist: '10.0.0.0/8',
      rateRequests: '10',
      ratePerSeconds: '60',
      idempotencyHeader: 'Idempotency-Key',
      idempotencyKey: '',
      idempotencyWindow: '3600',
      schemaCheck: 'warn',
      handshake: '',
      handshakeToken: '',
      alertWorkflowId: '',
      alertSilenceMinutes: '',
      alertRejectionsPerMinute: '',
      alertSchemaDrift: false,
    });
    expect(d.steps.map((s) => s.name)).toEqual(['shape', 'only big', 'notify', 'answer', 'custom']);
  });

  it('fill an empty form when the trigger has no options or response', () => {
    const w = workflow();
    const bare = workflow({
      trigger: { ...w.trigger, options: undefined, response: undefined } as unknown as Workflow['trigger'],
    });
    expect(draftFrom(bare).trigger).toMatchObject({
      responseMode: 'immediately',
      responseStatus: '',
      maxBodyBytes: '',
      allowedOrigins: '',
      rateRequests: '',
      idempotencyWindow: '',
      schemaCheck: 'off',
    });
  });

  it('carry settings.concurrency (SPEC 7d) both ways, and name what the form cannot send', () => {
    const concurrency = { key: '{{ body.customer.id }}', limit: 2, newestWins: '{{ body.updated }}' };
    const d = draftFrom(workflow({ settings: { concurrency } }));
    expect(d.concurrency).toEqual({ key: concurrency.key, limit: '2', newestWins: concurrency.newestWins });
    expect(payloadFrom(d).body.settings.concurrency).toEqual(concurrency);
    // The limit left empty is the default; no key, no setting.
    expect(
      payloadFrom({ ...d, concurrency: { key: '{{ body.id }}', limit: '', newestWins: '' } }).body.settings,
    ).toEqual({ concurrency: { key: '{{ body.id }}' } });
    expect(draftFrom(workflow()).concurrency).toEqual({ key: '', limit: '', newestWins: '' });
    expect(payloadFrom(draftFrom(workflow())).body.settings.concurrency).toBeUndefined();
    expect(payloadFrom({ ...d, concurrency: { key: '', limit: '3', newestWins: '' } }).problems).toEqual([
      {
        field: '/settings/concurrency/key',
        message: 'needs a key: the limit and newest wins apply to executions with equal keys',
      },
    ]);
    expect(payloadFrom({ ...d, concurrency: { key: 'k', limit: '0.5', newestWins: '' } }).problems).toEqual([
      { field: '/settings/concurrency/limit', message: 'must be a whole number from 1 to 1000' },
    ]);
  });

  it('copy what they are given, so editing the form does not change the workflow', () => {
    const w = workflow();
    const d = draftFrom(w);
    d.trigger.methods.push('GET');
    d.trigger.auth.username = 'bob';
    expect(w.trigger.methods).toEqual(['POST', 'PUT']);
    expect(w.trigger.auth.username).toBe('ann');
  });

  it('give back a saved workflow as the API takes it, without problems', () => {
    const w = workflow();
    const { body, problems } = payloadFrom(draftFrom(w));
    expect(problems).toEqual([]);
    const { testUrl: _t, productionUrl: _p, type: _type, ...trigger } = w.trigger;
    expect(body).toEqual({ name: 'Orders', trigger, steps: w.steps, settings: {} });
  });

  it('give back the error workflow setting, and clear it when the form has none', () => {
    const w = workflow({ settings: { errorWorkflowId: 'wf-alerts' } });
    const d = draftFrom(w);
    expect(d.errorWorkflowId).toBe('wf-alerts');
    expect(payloadFrom(d).body.settings).toEqual({ errorWorkflowId: 'wf-alerts' });
    expect(payloadFrom({ ...d, errorWorkflowId: '' }).body.settings).toEqual({});
  });

  it('give back the searchable fields, leave out empty rows, and name a bad path at its row', () => {
    const w = workflow({ settings: { searchFields: ['body.order_id', 'headers.x-github-event'] } });
    const d = draftFrom(w);
    expect(d.searchFields).toEqual(['body.order_id', 'headers.x-github-event']);
    expect(payloadFrom(d).body.settings).toEqual({
      searchFields: ['body.order_id', 'headers.x-github-event'],
    });
    expect(payloadFrom({ ...d, searchFields: ['', 'body.id'] }).body.settings).toEqual({
      searchFields: ['body.id'],
    });
    expect(payloadFrom({ ...d, searchFields: [''] }).body.settings).toEqual({});
    expect(draftFrom(workflow()).searchFields).toEqual([]);
    expect(payloadFrom({ ...d, searchFields: ['body.id', 'body..x'] }).problems).toEqual([
      {
        field: '/settings/searchFields/1',
        message: 'is not a field path: names in dots, e.g. body.order_id',
      },
    ]);
  });

  it('give back a sandbox opt-out unchanged, and none when there was none', () => {
    const w = workflow();
    const open = workflow({ trigger: { ...w.trigger, response: { mode: 'respondStep', sandbox: false } } });
    expect(draftFrom(open).trigger.responseSandbox).toBe(false);
    expect(payloadFrom(draftFrom(open)).body.trigger.response).toEqual({
      mode: 'respondStep',
      sandbox: false,
    });
    expect(draftFrom(w).trigger.responseSandbox).toBe(true);
  });

  it.each([42, true, null, '42', ''])('give back an immediate response body of %j unchanged', (body) => {
    const w = workflow();
    const saved = workflow({ trigger: { ...w.trigger, response: { mode: 'immediately', body } } });
    const { body: payload, problems } = payloadFrom(draftFrom(saved));
    expect(problems).toEqual([]);
    expect(payload.trigger.response).toEqual({ mode: 'immediately', body });
  });

  it('report a missing workflow name and step names used twice', () => {
    const d: Draft = draftFrom(workflow());
    d.name = '  ';
    d.steps[3]!.name = 'shape ';
    d.steps[4]!.name = 'shape';
    const { body, problems } = payloadFrom(d);
    expect(body.name).toBe('');
    expect(problems).toEqual([
      { field: '/name', message: 'needs a name' },
      { field: '/steps/3/name', message: '"shape" is used by another step' },
      { field: '/steps/4/name', message: '"shape" is used by another step' },
    ]);
  });

  it('do not report unnamed steps as used twice', () => {
    const d: Draft = {
      name: 'w',
      trigger: triggerDraft(),
      steps: [newStep('set', []), newStep('set', [])],
      errorWorkflowId: '',
      searchFields: [],
      concurrency: { key: '', limit: '', newestWins: '' },
    };
    d.steps[0]!.name = '';
    d.steps[1]!.name = '';
    expect(payloadFrom(d).problems).toEqual([
      { field: '/steps/0/name', message: 'needs a name' },
      { field: '/steps/1/name', message: 'needs a name' },
    ]);
  });

  it('give back steps in the form the editor writes them, for any names and string values', () => {
    const text = fc.string({ maxLength: 8 });
    const name = fc
      .string({ minLength: 1, maxLength: 8 })
      .filter((s) => s.trim() === s && s !== '' && s !== '__proto__');
    const strings = fc.dictionary(name, text, { maxKeys: 3 });
    const step = fc.oneof(
      fc.record({
        type: fc.constant('set'),
        fields: strings,
        keepInput: fc.constant(true),
      }),
      fc.record({ type: fc.constant('filter'), condition: text.filter((s) => s.trim() !== '') }),
      fc.record(
        {
          type: fc.constant('http'),
          method: fc.constantFrom('GET', 'POST', 'DELETE'),
          // Any path after a valid start (a URL the form would refuse is not written back).
          url: text.map((t) => `https://example.com/${encodeURIComponent(t)}`),
          headers: strings.filter((h) => Object.keys(h).length > 0),
          body: fc.dictionary(name, fc.jsonValue(), { maxKeys: 3 }),
          timeoutMs: fc.nat(),
          failOnError: fc.constant(false),
        },
        { requiredKeys: ['type', 'method', 'url'] },
      ),
      fc.record(
        {
          type: fc.constant('respond'),
          status: fc.integer({ min: 200, max: 599 }),
          body: fc.array(fc.jsonValue()),
        },
        { requiredKeys: ['type'] },
      ),
      fc.record({ type: fc.constant('custom'), config: fc.jsonValue() }),
    );
    fc.assert(
      fc.property(
        fc
          .uniqueArray(name, { maxLength: 5 })
          .chain((names) => fc.tuple(...names.map((n) => step.map((s) => ({ name: n, ...s }) as Step)))),
        (steps) => {
          const d: Draft = {
            name: 'w',
            trigger: triggerDraft(),
            steps: steps.map(stepDraftFrom),
            errorWorkflowId: '',
            searchFields: [],
            concurrency: { key: '', limit: '', newestWins: '' },
          };
          const { body, problems } = payloadFrom(d);
          expect(problems).toEqual([]);
          expect(body.steps).toEqual(JSON.parse(JSON.stringify(steps)));
        },
      ),
    );
  });
});
