/**
 * An execution's record within HOOKFLOW_EXECUTION_RECORD_MAX_BYTES (model/record-json.ts): sizes
 * measured without writing, values past the limit as markers, the record never over it, exactly
 * JSON.stringify's text when everything fits; and record deltas that put back the whole record.
 */
import { describe, expect, it } from 'vitest';
import {
  applyRecordsDelta,
  assembleRecords,
  isOmitted,
  JsonSizer,
  type ListDelta,
  OMITTED,
  type RecordNode,
  recordJson,
  recordsDelta,
} from '../../src/model/record-json.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const MiB = 1024 * 1024;

describe('JsonSizer', () => {
  const values: [string, unknown][] = [
    ['ascii', 'hello'],
    ['escapes', 'a"b\\c\nd\te\u0001\u001f'],
    ['unicode', 'héllo wörld ✓ 日本'],
    ['astral', '😀 and 𝄞'],
    ['lone surrogate', 'a\ud800b\udc00c'],
    ['numbers', [0, 1, -1, 1.5, 1e21, 2 ** 64 + 0.5, Number.NaN, Number.POSITIVE_INFINITY]],
    ['literals', [true, false, null]],
    ['skipped', { a: undefined, b: () => 1, c: 1, d: Symbol('x') }],
    ['array holes', [undefined, () => 1, 2]],
    ['nested', { a: [{ b: { c: ['x', { d: 'é' }] } }], 'k"ey': 1, ünï: 2 }],
    ['toJSON', { at: new Date(0), n: { toJSON: () => 'x' } }],
    ['long string', 'é'.repeat(300)],
  ];

  it.each(values)('measures %s as JSON.stringify writes it, in UTF-8 bytes', (_name, value) => {
    expect(new JsonSizer().size(value, Number.POSITIVE_INFINITY)).toBe(bytes(JSON.stringify(value)));
    expect(new JsonSizer({ remember: false }).size(value, Number.POSITIVE_INFINITY)).toBe(
      bytes(JSON.stringify(value)),
    );
  });

  it('stops past its limit, and tells a shared value of 260 MB in a few milliseconds', () => {
    // What forEach → set {customer: $trigger.body.customer} builds: one 130 KB string, 2 000 times.
    const customer = 'c'.repeat(130_000);
    const amplified = Array.from({ length: 2_000 }, (_, i) => ({ customer, i }));
    const sizer = new JsonSizer();
    const t = performance.now();
    expect(sizer.size(amplified, 4 * MiB)).toBeGreaterThan(4 * MiB);
    const exact = sizer.measure(amplified);
    const ms = performance.now() - t;
    // [ {"customer":"…","i":N} , … ]
    const element = 2 + '"customer":'.length + 130_002 + ',"i":'.length;
    const expected = 2 + 2_000 * element + 1_999 + sumDigits(2_000);
    expect(exact).toBe(expected);
    expect(ms).toBeLessThan(200);
  });

  it('measure gives up on a value of too many nodes', () => {
    expect(
      new JsonSizer().measure(
        Array.from({ length: 1_000 }, () => [1]),
        100,
      ),
    ).toBeUndefined();
  });
});

/** Digits of 0…n-1, written as numbers. */
function sumDigits(n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += String(i).length;
  return s;
}

const record = (name: string, output: unknown, extra: Record<string, unknown> = {}): RecordNode => ({
  name,
  type: 'set',
  status: 'succeeded',
  input: { in: name },
  output,
  error: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:00.001Z',
  ...extra,
});

const withoutTopInputs = (records: RecordNode[]) => records.map((r) => ({ ...r, input: undefined }));

describe('recordJson', () => {
  it('is JSON.stringify of the records (top-level inputs left out) when everything fits', () => {
    const nested = record('loop', [1, 2], {
      type: 'forEach',
      iterations: [{ index: 0, status: 'succeeded', steps: [record('inner', { x: 'é"' })] }],
      iterationCount: 1,
    });
    const records = [record('a', { v: 1 }), nested, record('b', 'x'.repeat(100_000))];
    expect(recordJson(records, 4 * MiB)).toBe(JSON.stringify(withoutTopInputs(records)));
    // Past the quick path too (over 64 KiB), the writer gives the same text.
    const big = [record('a', 'y'.repeat(70_000)), nested];
    expect(recordJson(big, 4 * MiB)).toBe(JSON.stringify(withoutTopInputs(big)));
  });

  it('leaves out what does not fit as a marker with its size, and stays under the limit', () => {
    const customer = 'c'.repeat(130_000);
    const outputs = Array.from({ length: 2_000 }, () => ({ customer }));
    const iterations = outputs.slice(0, 100).map((o, index) => ({
      index,
      status: 'succeeded',
      steps: [record('copy', o, { input: { line: index } })],
    }));
    const loop = record('loop', outputs, { type: 'forEach', iterations, iterationCount: 2_000 });
    const records = [record('first', { small: true }), loop];
    const json = recordJson(records, 1 * MiB)!;
    expect(bytes(json)).toBeLessThanOrEqual(1 * MiB);
    const parsed = JSON.parse(json) as RecordNode[];
    expect(parsed[0]!.output).toEqual({ small: true });
    const stored = parsed[1]!;
    // [{"customer":"…"}, …] measured, not written: 260 MB.
    expect(stored.output).toEqual({ $omitted: OMITTED, bytes: 2 + 2_000 * (2 + 11 + 130_002) + 1_999 });
    const kept = (stored.iterations as { steps: RecordNode[] }[]).map((it) => it.steps[0]!.output);
    expect(kept).toHaveLength(100);
    // The first outputs fit, the rest are markers; every record is there with its small input.
    expect(kept[0]).toEqual({ customer });
    expect(isOmitted(kept[99])).toBe(true);
    expect((stored.iterations as { steps: RecordNode[] }[])[99]!.steps[0]!.input).toEqual({ line: 99 });
    expect(stored.iterationCount).toBe(2_000);
  });

  it('keeps the last output (what lastStep answers) before earlier ones, and every top-level record', () => {
    const big = 'b'.repeat(400_000);
    const records = [
      ...Array.from({ length: 10 }, (_, i) => record(`early${i}`, big)),
      record('last', { answer: 'a'.repeat(300_000) }),
    ];
    const parsed = JSON.parse(recordJson(records, 1 * MiB)!) as RecordNode[];
    expect(parsed.map((r) => r.name)).toEqual(records.map((r) => r.name));
    expect(parsed[10]!.output).toEqual({ answer: 'a'.repeat(300_000) });
    expect(parsed[0]!.output).toBe(big);
    expect(isOmitted(parsed[2]!.output)).toBe(true);
  });

  it('cuts nested lists short when their records alone no longer fit, saying how many it left out', () => {
    const inner = Array.from({ length: 100 }, (_, index) => ({
      index,
      status: 'succeeded',
      steps: Array.from({ length: 1_000 }, (_, k) => record(`s${k}`, k)),
    }));
    const records = [record('loop', null, { type: 'forEach', iterations: inner, iterationCount: 100 })];
    const json = recordJson(records, 1 * MiB)!;
    expect(bytes(json)).toBeLessThanOrEqual(1 * MiB);
    const loop = (JSON.parse(json) as RecordNode[])[0]!;
    const iterations = loop.iterations as { steps: unknown[]; stepsOmitted?: number }[];
    const written = iterations.reduce((n, it) => n + it.steps.length, 0);
    const omitted =
      iterations.reduce((n, it) => n + (it.stepsOmitted ?? 0), 0) + (100 - iterations.length) * 1_000 + 0;
    expect(written).toBeGreaterThan(1_000);
    expect(written + omitted).toBe(100_000);
    expect(loop.iterationsOmitted).toBe(100 - iterations.length);
  });

  it('strict: undefined instead of leaving anything out', () => {
    expect(recordJson([record('a', 'x'.repeat(2 * MiB))], 1 * MiB, { strict: true })).toBeUndefined();
    expect(recordJson([record('a', 'x')], 1 * MiB, { strict: true })).toBe(
      JSON.stringify(withoutTopInputs([record('a', 'x')])),
    );
  });
});

describe('record deltas', () => {
  /** The records of a forEach parked at iteration `i` (its wait `waiting`), as the engine keeps them. */
  function loopAt(loop: RecordNode, i: number, done: boolean) {
    const iterations = loop.iterations as RecordNode[];
    // The iteration parked before is done now: its wait record replaced, a set after it.
    const previous = iterations[iterations.length - 1];
    if (previous) {
      const steps = previous.steps as RecordNode[];
      steps[steps.length - 1] = record('pause', { line: i - 1 }, { type: 'wait', input: { line: i - 1 } });
      steps.push(record('after', { n: i - 1 }));
      previous.status = 'succeeded';
    }
    if (!done) {
      iterations.push({
        index: i,
        status: 'waiting',
        steps: [record('pause', null, { type: 'wait', status: 'waiting', input: { line: i } })],
      });
      loop.iterationCount = i + 1;
    } else {
      loop.status = 'succeeded';
      loop.output = Array.from({ length: i }, (_, k) => ({ n: k }));
    }
  }

  it('write each record once, continue the ones going on, and put the whole record back', () => {
    const persisted = new WeakMap<object, number>();
    const loop = record('loop', null, {
      type: 'forEach',
      status: 'waiting',
      iterations: [],
      iterationCount: 0,
    });
    const records = [record('first', { a: 1 }), loop];
    const deltas: string[] = [];
    let settled = 0;
    let total = 0;
    for (let i = 0; i <= 50; i++) {
      loopAt(loop, i, i === 50);
      const d = recordsDelta(records, persisted, settled, 4 * MiB);
      settled = d.settled;
      deltas.push(d.json);
      total += bytes(d.json);
      // Each delta holds about one iteration, not all of them so far.
      expect(bytes(d.json)).toBeLessThan(1_500);
    }
    const whole = JSON.stringify(withoutTopInputs(records));
    expect(JSON.stringify(assembleRecords(deltas))).toBe(whole);
    expect(total).toBeLessThan(3 * bytes(whole));
  });

  it('a continuation changes only the fields that change, and its list from where it stood', () => {
    const list: RecordNode[] = [
      { name: 'loop', status: 'waiting', iterations: [{ index: 0, status: 'waiting' }] },
    ];
    const delta: ListDelta = {
      from: 0,
      items: [
        {
          '~': 1,
          status: 'succeeded',
          iterations: {
            from: 0,
            items: [
              { '~': 1, status: 'succeeded' },
              { index: 1, status: 'succeeded' },
            ],
          },
        },
      ],
    };
    applyRecordsDelta(list, delta);
    expect(list).toEqual([
      {
        name: 'loop',
        status: 'succeeded',
        iterations: [
          { index: 0, status: 'succeeded' },
          { index: 1, status: 'succeeded' },
        ],
      },
    ]);
  });
});
