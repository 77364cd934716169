import { describe, expect, it } from 'vitest';
import { compileTemplate, renderTemplate } from '../../src/engine/expressions.js';
import { variableNameProblem } from '../../src/shared/variables.js';
import { render, type Scope } from '../../web/src/lib/expressions.js';
import { walkSteps } from '../../web/src/lib/stepTree.js';
import {
  maskedSecretsOf,
  namesSecrets,
  secretsAllowedIn,
  type Variable,
  variableFields,
  varsOf,
} from '../../web/src/lib/variables.js';
import type { Step } from '../../web/src/types.js';

const at = '2026-01-01T00:00:00.000Z';
const variables: Variable[] = [
  { name: 'API_URL', value: 'https://api.example.com', secret: false, createdAt: at, updatedAt: at },
  { name: 'SLACK_WEBHOOK_URL', value: '***', secret: true, createdAt: at, updatedAt: at },
];

const scope: Scope = {
  input: { id: 7 },
  trigger: { body: { id: 7 } },
  steps: {},
  execution: { id: 'e', mode: 'test', workflowId: 'w', attempt: 1 },
  vars: varsOf(variables),
};

describe('variables in previews', () => {
  it('reads $vars with the real values, as the engine does', async () => {
    const text = '{{ $vars.API_URL }}/orders/{{ body.id }}';
    const engine = await renderTemplate(compileTemplate(text).template, {
      ...scope,
      input: { body: { id: 7 } },
    });
    expect(await render(text, { ...scope, input: { body: { id: 7 } } })).toBe(engine);
    expect(engine).toBe('https://api.example.com/orders/7');
  });

  it('shows a secret as *** where one is allowed, and nothing elsewhere', async () => {
    expect(
      await render('{{ $secrets.SLACK_WEBHOOK_URL }}', { ...scope, secrets: maskedSecretsOf(variables) }),
    ).toBe('***');
    expect(await render('{{ $secrets.SLACK_WEBHOOK_URL }}', scope)).toBeUndefined();
    expect(varsOf(variables)).toEqual({ API_URL: 'https://api.example.com' });
  });
});

describe('where $secrets may be used', () => {
  const steps = [
    { type: 'sql', name: 'insert', credential: 'c', query: 'select 1', params: ['{{ body.id }}'] },
    {
      type: 'if',
      name: 'big',
      condition: '{{ true }}',
      then: [{ type: 'http', name: 'notify', method: 'POST', url: 'https://x', headers: {} }],
      else: [],
    },
    { type: 'set', name: 'set', fields: {} },
  ] as unknown as Step[];
  const allowed = secretsAllowedIn(walkSteps(steps));

  it.each([
    ['/steps/0/params/0', true],
    ['/steps/0/params', true],
    ['/steps/0/query', false],
    ['/steps/1/condition', false],
    ['/steps/1/then/0/url', true],
    ['/steps/1/then/0/headers/Authorization', true],
    ['/steps/1/then/0/timeoutMs', false],
    ['/steps/2/fields/x', false],
    ['/settings/concurrency/key', false],
  ])('%s: %s', (field, expected) => {
    expect(allowed(field)).toBe(expected);
  });

  it('is nowhere for a field without a pointer', () => {
    expect(allowed(undefined)).toBe(false);
  });
});

describe('the picker’s entries', () => {
  it('offers $vars always and $secrets only where allowed, a secret’s example as ***', () => {
    expect(variableFields(variables, false).map((f) => f.insert)).toEqual(['$vars.API_URL']);
    expect(variableFields(variables, true)).toEqual([
      {
        group: 'Variables ($vars)',
        label: '$vars.API_URL',
        insert: '$vars.API_URL',
        type: 'string',
        example: 'https://api.example.com',
        variable: true,
      },
      {
        group: 'Secrets ($secrets)',
        label: '$secrets.SLACK_WEBHOOK_URL',
        insert: '$secrets.SLACK_WEBHOOK_URL',
        type: 'string',
        example: '***',
        variable: true,
      },
    ]);
  });

  it('tells a text naming $secrets', () => {
    expect(namesSecrets('{{ $secrets.KEY }}')).toBe(true);
    expect(namesSecrets('{{ $secretsX }}')).toBe(false);
    expect(namesSecrets('{{ $vars.KEY }}')).toBe(false);
  });
});

describe('variableNameProblem', () => {
  it.each([
    ['API_URL', undefined],
    ['_X1', undefined],
    ['', 'must not be empty'],
    ['api_url', 'may hold only'],
    ['1ST', 'may hold only'],
    ['A-B', 'may hold only'],
    ['A'.repeat(129), 'has 129 characters'],
  ])('%s', (name, problem) => {
    const found = variableNameProblem(name);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });
});
