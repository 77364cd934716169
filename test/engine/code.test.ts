/**
 * The `code` step (SPEC 7b) through the engine: inputs as deep copies, the returned JSON, logs,
 * errors with line:column, the time and memory limits (the process survives and the next run
 * works), what the sandbox does not have, and the syntax check on save.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/run.js';
import { validateSteps, validateStepsAsync } from '../../src/engine/validate.js';
import type { Step, Workflow } from '../../src/model/workflow.js';

const engine = new Engine({
  allowPrivateNetwork: false,
  executionTimeoutMs: 30_000,
  codeMemoryMb: 16,
  codeTimeoutMs: 300,
});
afterAll(() => engine.close());

let n = 0;
const workflow = (steps: Record<string, unknown>[]): Workflow =>
  ({
    id: `wf-code-${++n}`,
    name: 'test',
    active: true,
    version: 1,
    publishedVersion: 1,
    trigger: {} as Workflow['trigger'],
    steps: steps as Step[],
    settings: {},
    createdAt: '',
    updatedAt: '',
  }) as Workflow;
const ctx = { executionId: 'ex-code', mode: 'test' as const };
const code = (
  source: string,
  item: unknown = { body: { amount: 21 } },
  before: Record<string, unknown>[] = [],
) => engine.run(workflow([...before, { type: 'code', name: 'js', source }]), item, ctx);

describe('code step', () => {
  it('returns JSON from $input, $trigger, $steps and $execution; console.log lines are the logs', async () => {
    const r = await code(
      [
        'console.log("amount", $input.amount, { a: 1 });',
        '$input.amount = 0; // a copy: the engine’s value is untouched',
        'return { total: $trigger.body.amount * 2, prev: $steps.prep.amount, mode: $execution.mode, when: typeof Date.now() };',
      ].join('\n'),
      { body: { amount: 21 } },
      [{ type: 'set', name: 'prep', fields: { amount: '{{ body.amount }}' } }],
    );
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual({ total: 42, prev: 21, mode: 'test', when: 'number' });
    expect(r.steps[0]!.output).toEqual({ amount: 21 });
    expect(r.steps[1]!.logs).toEqual(['amount 21 {"a":1}']);
  });

  it('`{{ }}` in the source is JavaScript, not an expression; no return gives null', async () => {
    const r = await code('const o = {{a: 1}}.a; return "{{ not jsonata }}" + o', {});
    expect(r.status).toBe('failed'); // `{{a: 1}}` is a block with a label in JS: a syntax error at run
    const ok = await code('return "{{ not jsonata }}"');
    expect(ok.output).toBe('{{ not jsonata }}');
    expect((await code('let x = 1;')).output).toBeNull();
  });

  it('a throw fails the step with the message and line:column, keeping the logs', async () => {
    const r = await code('console.log("before");\nconst x = 1;\n  throw new Error("no customer");');
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'js' });
    expect(r.error!.message).toMatch(/^Error: no customer \(at 3:\d+\)$/);
    expect(r.steps[0]!.logs).toEqual(['before']);
  });

  it('an endless loop is stopped at the time limit', async () => {
    const r = await code('while (true) {}');
    expect(r.status).toBe('failed');
    expect(r.error!.message).toMatch(/longer than its limit of 300 ms \(HOOKFLOW_CODE_TIMEOUT_MS\)/);
    expect(r.error!.message).toMatch(/\(at 1:\d+\)/);
  });

  it('memory exhaustion fails the step, and the next run works', async () => {
    const r = await code(
      'const parts = []; for (let i = 0; i < 64; i++) parts.push(new Uint8Array(1 << 20)); return parts.length;',
    );
    expect(r.status).toBe('failed');
    expect(r.error!.message).toMatch(/memory limit of 16 MB \(HOOKFLOW_CODE_MEMORY_MB\)/);
    const next = await code('return 1 + 1');
    expect(next.output).toBe(2);
  });

  it('an endless loop of typed arrays stops at the memory limit, not at the 2 GB WebAssembly allows', async () => {
    const before = process.resourceUsage().maxRSS; // KiB
    const r = await code('const a = []; for (;;) a.push(new Uint8Array(1 << 20));');
    expect(r.status).toBe('failed');
    expect(r.error!.message).toMatch(/memory limit of 16 MB/);
    // The WebAssembly memory is capped (limit + 16 MiB initial + 16 MiB slack); uncapped it grew to ~2 GB.
    expect(process.resourceUsage().maxRSS - before).toBeLessThan(400 * 1024);
    expect((await code('return "ok"')).output).toBe('ok');
  });

  it('require, process, fetch and timers are absent, and the message says so', async () => {
    for (const source of [
      'require("fs")',
      'process.exit(1)',
      'fetch("http://example.com")',
      'setTimeout(() => 1, 10)',
    ]) {
      const r = await code(source);
      expect(r.status, source).toBe('failed');
      expect(r.error!.message, source).toMatch(
        /is not defined\. The code step runs in a sandbox without require, import, fetch, process/,
      );
    }
    const r = await code(
      'return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof globalThis.std]',
    );
    expect(r.output).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
  });

  it('globals do not leak from one run to the next (built-ins are frozen)', async () => {
    await code('globalThis.leak = 1; Array.prototype.evil = 1; Math.max = () => 0; JSON.x = 1; return 1');
    const r = await code('return [typeof leak, [].evil, Math.max(1, 2), JSON.x]');
    expect(r.output).toEqual(['undefined', null, 2, null]);
    const strict = await code('"use strict"; Array.prototype.evil = 1;');
    expect(strict.status).toBe('failed');
  });

  it('Error subclasses and own toString still work on frozen built-ins', async () => {
    const r = await code(
      [
        'class NotFound extends Error { constructor(m) { super(m); this.name = "NotFound"; } }',
        'const o = {}; o.toString = () => "mine";',
        'try { throw new NotFound("x") } catch (e) { return [e.name, String(e), "" + o, new Error("y").name] }',
      ].join('\n'),
    );
    expect(r.output).toEqual(['NotFound', 'NotFound: x', 'mine', 'Error']);
  });

  it('ES2023 built-ins are there', async () => {
    const r = await code(
      'return [[3, 1, 2].toSorted(), [1, 2, 3].findLast((x) => x < 3), Object.hasOwn({ a: 1 }, "a"), [1, [2]].flat()]',
    );
    expect(r.output).toEqual([[1, 2, 3], 2, true, [1, 2]]);
  });

  it('a value that is not JSON fails the step', async () => {
    const r = await code('return 10n');
    expect(r.status).toBe('failed');
    expect(r.error!.message).toMatch(/cannot be made JSON/);
  });
});

describe('code syntax on save', () => {
  it('validateStepsAsync names /steps/N/source with the position; import is a syntax error', async () => {
    const errors = await validateStepsAsync([
      { type: 'set', name: 'a', fields: {} },
      { type: 'code', name: 'b', source: 'const x = 1;\nreturn x +;' },
    ] as Step[]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.field).toBe('/steps/1/source');
    expect(errors[0]!.message).toMatch(/SyntaxError: .* \(at 2:\d+\)/);
    const nested = validateSteps([
      {
        type: 'if',
        name: 'i',
        condition: '{{ true }}',
        then: [{ type: 'code', name: 'c', source: 'import fs from "fs"' }],
      },
    ] as Step[]);
    expect(nested[0]!.field).toBe('/steps/0/then/0/source');
    expect(validateSteps([{ type: 'code', name: 'c', source: 'return $input' }] as Step[])).toEqual([]);
  });
});
