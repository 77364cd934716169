/**
 * An execution's record as stored: its step records (engine/run.ts StepResult, nested ones in
 * `steps` and `iterations`) as JSON of at most HOOKFLOW_EXECUTION_RECORD_MAX_BYTES. A value that
 * does not fit (an input, an output, an error, a request…) is written as an `Omitted` marker with
 * its size; the step records themselves are always there at the top level, and nested ones while
 * they fit (a list cut short says how many it left out: `iterationsOmitted`, `stepsOmitted`).
 *
 * A run's values can be far bigger as JSON than in memory: JavaScript strings are shared by
 * reference, so `forEach` over 2 000 lines copying a 130 KB field makes 260 MB of JSON out of a
 * 274 KB request, and serialising that whole (then cutting it) is what stalled the event loop. So
 * sizes are measured without building the text (`JsonSizer`: a walk that stops past the room
 * left, and remembers the sizes of strings and objects it met), and only values that fit are
 * serialised.
 *
 * Two forms: the whole record (`recordJson`), and the records added or changed since a waiting
 * execution's last checkpoint (`RecordDeltaWriter`; applied back by `applyRecordsDelta`), so that
 * the checkpoints of a wait inside a loop write each record once, not all of them at every park.
 */
import { JsonSizer, MARKER_MAX, markerJson, SKIP, stringJsonSize } from './json-size.js';

/** HOOKFLOW_EXECUTION_RECORD_MAX_BYTES's default (config.ts repeats it: config imports no model). */
export const DEFAULT_RECORD_MAX_BYTES = 4 * 1024 * 1024;

export { isOmitted, JsonSizer, OMITTED, type Omitted, stringJsonSize } from './json-size.js';

/** A step record or a `forEach` iteration, as the writer sees them. */
export type RecordNode = Record<string, unknown>;

/** Fields written as they are: short by construction (names, statuses, times, indexes, counts). */
const SMALL = new Set([
  'name',
  'type',
  'status',
  'startedAt',
  'finishedAt',
  'branch',
  'iterationCount',
  'index',
  'stepsOmitted',
  'iterationsOmitted',
]);

/** Fields holding nested nodes: `steps` (if/switch records, iterations) and `iterations` (forEach). */
const LISTS = new Set(['steps', 'iterations']);

/** A step record's fields that change after it was first written: what a continuation carries. */
const MUTABLE = new Set(['status', 'finishedAt', 'branch', 'iterationCount', 'output', 'error']);

/** Room for `,"iterationsOmitted":<count>` after a list cut short. */
const OMITTED_COUNT_MAX = ',"iterationsOmitted":'.length + 10;

/**
 * How a list of records changed since it was last written: positions `from` on are (re)written by
 * `items`, each a whole record or, `{"~": 1, …}`, a continuation of the record already there (its
 * fields that changed, and the delta of its own list).
 */
export interface ListDelta {
  from: number;
  items: RecordNode[];
}

/** The node's list of children (its `iterations` or `steps`), if it has one. */
function childrenOf(node: RecordNode): RecordNode[] | undefined {
  if (Array.isArray(node.iterations)) return node.iterations as RecordNode[];
  if (Array.isArray(node.steps)) return node.steps as RecordNode[];
  return undefined;
}

/** A record still going on (a parked step, or one holding it) is `waiting`; it changes again. */
const isOpen = (node: RecordNode | undefined): boolean => node?.status === 'waiting';

/** How many of `list`'s nodes will not change again: all but a last one still going on. */
export function settledCount(list: readonly RecordNode[]): number {
  return isOpen(list[list.length - 1]) ? list.length - 1 : list.length;
}

/** Past ASCII: more than one byte a character. */
const NON_ASCII = /[\u0080-\uffff]/;

/** The UTF-8 length of `s` (JSON text: no lone surrogates, JSON.stringify escapes them). */
function utf8Length(s: string): number {
  if (!NON_ASCII.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** JSON.stringify leaves these out of an object. */
const absent = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

interface WriterOptions {
  /** The most bytes to write (values past it are markers). */
  maxBytes: number;
  /** Cut nested lists short when their records no longer fit (the whole record); never in deltas. */
  cut: boolean;
  /** Give up (`failed`) at the first value or record that does not fit, instead of leaving it out. */
  strict?: boolean;
  /**
   * Deltas: the nodes written before that may still change (those going on), with their lists'
   * settled counts; such a node is written as a continuation.
   */
  persisted?: WeakMap<object, number>;
}

/**
 * Writes records as JSON within `maxBytes`, counting UTF-8 bytes. A record's own fields (with room
 * for a marker in place of each value, and for its lists' brackets) are set aside before any of
 * its values is looked at, so a marker always fits; values come in the order the steps ran, each
 * written when it fits in what is left.
 */
class Writer {
  readonly #max: number;
  readonly #sizer = new JsonSizer();
  readonly #cut: boolean;
  readonly #strict: boolean;
  readonly #persisted: WeakMap<object, number> | undefined;
  readonly #out: string[] = [];
  #used = 0;
  /** Bytes set aside for what is not written yet (records' own fields, priority values). */
  #reserved = 0;
  /** Values written from room set aside for them first: node → field and size. */
  readonly #priority = new Map<RecordNode, { key: string; size: number }>();
  /** Part of `#reserved` set aside for nested records' own fields (`reserveNested`), not yet drawn. */
  #pool = 0;
  /** Strict: something did not fit. */
  failed = false;
  /** Every node written (deltas: the caller enters those going on in `persisted`). */
  readonly written: RecordNode[] = [];

  constructor({ maxBytes, cut, strict, persisted }: WriterOptions) {
    this.#max = maxBytes;
    this.#cut = cut;
    this.#strict = strict === true;
    this.#persisted = persisted;
  }

  get used(): number {
    return this.#used;
  }

  text(): string {
    return this.#out.join('');
  }

  #room(): number {
    return this.#max - this.#used - this.#reserved;
  }

  /** Writes `s` out of room set aside for it; its size in bytes. */
  #spend(s: string): number {
    const n = utf8Length(s);
    this.#out.push(s);
    this.#used += n;
    this.#reserved -= n;
    return n;
  }

  #continues(node: RecordNode): boolean {
    return this.#persisted?.has(node) === true;
  }

  /**
   * Sets `node[key]` aside first (what `lastStep`/`respondStep` answer with), when it fits in the
   * room left once the top-level records' own fields are set aside (`reserveTop` before this).
   */
  prioritise(node: RecordNode | undefined, key: string): void {
    if (!node || this.#priority.has(node) || this.#continues(node)) return;
    const room = this.#room();
    const size = this.#sizer.size(node[key], room);
    if (size === SKIP || size > room) return;
    this.#priority.set(node, { key, size });
    this.#reserved += size;
  }

  /** The bytes of `node`'s own fields: markers for its values, empty brackets for its lists. */
  #ownSize(node: RecordNode, top: boolean): number {
    const continuation = this.#continues(node);
    let n = continuation ? 8 : 2; // `{"~":1` … `}`
    let first = !continuation;
    for (const k in node) {
      if (!this.#writes(node, k, top, continuation)) continue;
      const v = node[k];
      n += stringJsonSize(k) + 1 + (first ? 0 : 1);
      first = false;
      if (LISTS.has(k) && Array.isArray(v))
        n += continuation ? '{"from":,"items":[]}'.length + 16 : 2 + OMITTED_COUNT_MAX;
      else if (SMALL.has(k)) n += this.#sizer.size(v, Number.POSITIVE_INFINITY);
      else n += MARKER_MAX;
    }
    return n;
  }

  /** Whether field `k` of `node` is written. */
  #writes(node: RecordNode, k: string, top: boolean, continuation: boolean): boolean {
    if (!Object.hasOwn(node, k) || k === '~' || (top && k === 'input') || absent(node[k])) return false;
    return !continuation || MUTABLE.has(k) || LISTS.has(k);
  }

  /**
   * Writes `node`, `prefix` (a comma or nothing) first, out of `need` bytes set aside for its own
   * fields (`#ownSize` + the prefix).
   */
  #node(node: RecordNode, top: boolean, need: number, prefix: string): void {
    const continuation = this.#continues(node);
    let prepaid = need;
    const spend = (s: string) => {
      prepaid -= this.#spend(s);
    };
    spend(prefix + (continuation ? '{"~":1' : '{'));
    let first = !continuation;
    for (const k in node) {
      if (!this.#writes(node, k, top, continuation)) continue;
      const v = node[k];
      spend(`${first ? '' : ','}${JSON.stringify(k)}:`);
      first = false;
      if (LISTS.has(k) && Array.isArray(v)) {
        const list = v as RecordNode[];
        if (continuation) {
          const from = this.#persisted!.get(node) ?? 0;
          spend(`{"from":${from},"items":[`);
          this.#items(list, from);
          spend(']}');
        } else {
          spend('[');
          const left = this.#items(list, 0);
          spend(']');
          if (left > 0) spend(`,${JSON.stringify(`${k}Omitted`)}:${left}`);
        }
      } else if (SMALL.has(k)) spend(JSON.stringify(v));
      else prepaid -= this.#value(node, k, v);
    }
    spend('}');
    // Room set aside for markers and counts not needed.
    this.#reserved -= prepaid;
    this.written.push(node);
  }

  /** Writes a value, or its marker out of the room set aside for one; the bytes taken from that room. */
  #value(node: RecordNode, k: string, v: unknown): number {
    const prior = this.#priority.get(node);
    if (prior && prior.key === k) {
      this.#priority.delete(node);
      this.#out.push(JSON.stringify(v));
      this.#used += prior.size;
      this.#reserved -= prior.size;
      return 0;
    }
    const room = this.#room();
    const size = this.#sizer.size(v, room);
    if (size <= room) {
      this.#out.push(JSON.stringify(v));
      this.#used += size;
      return 0;
    }
    if (this.#strict) this.failed = true;
    const exact = this.#sizer.measure(v);
    return this.#spend(markerJson(exact ?? size, exact !== undefined));
  }

  /** Writes `list[from…]`; returns how many it left out (cut short: they no longer fit). */
  #items(list: RecordNode[], from: number): number {
    for (let i = from; i < list.length; i++) {
      const item = list[i]!;
      const need = this.#ownSize(item, false) + (i > from ? 1 : 0);
      if (this.#pool >= need) this.#pool -= need;
      else if (this.#cut && need > this.#room()) {
        if (this.#strict) this.failed = true;
        return list.length - i;
      } else this.#reserved += need;
      this.#node(item, false, need, i > from ? ',' : '');
    }
    return 0;
  }

  #topNeeds: number[] = [];
  #topFrom = 0;

  /** Sets aside the top-level records' own fields (`from` on): they are written whatever the room. */
  reserveTop(records: readonly RecordNode[], from = 0): void {
    this.#topFrom = from;
    this.#topNeeds = [];
    for (let i = from; i < records.length; i++) {
      const need = this.#ownSize(records[i]!, true) + (i > from ? 1 : 0);
      this.#topNeeds.push(need);
      this.#reserved += need;
    }
  }

  /**
   * Sets aside the nested records' own fields too, when they come to at most `share` of the room
   * left: then values, which take the room in the order the steps ran, cannot crowd records out
   * (otherwise lists are cut short where the room ends).
   */
  reserveNested(records: readonly RecordNode[], share: number): void {
    const limit = this.#room() * share;
    let total = 0;
    const walk = (list: readonly RecordNode[]): boolean => {
      for (let i = 0; i < list.length; i++) {
        const node = list[i]!;
        const children = childrenOf(node);
        if (children) {
          for (let k = 0; k < children.length; k++) {
            total += this.#ownSize(children[k]!, false) + (k > 0 ? 1 : 0);
            if (total > limit) return false;
          }
          if (!walk(children)) return false;
        }
      }
      return true;
    };
    if (!walk(records)) return;
    this.#pool = total;
    this.#reserved += total;
  }

  /** Writes the top-level records (`from` on) set aside by `reserveTop`. */
  writeTop(records: readonly RecordNode[]): void {
    const from = this.#topFrom;
    for (let i = from; i < records.length; i++)
      this.#node(records[i]!, true, this.#topNeeds[i - from]!, i > from ? ',' : '');
  }
}

/**
 * The step records as stored, within `maxBytes` (UTF-8): top-level records without their `input`
 * (it is the previous step's output, or the trigger item: store/executions.ts `withStepInputs`).
 * Every top-level record is there; room goes first to what a webhook caller may be answered with
 * (the last top-level output, the first `respond` step's), then to values in the order the steps
 * ran. When everything fits, the text is JSON.stringify's. `strict`: undefined rather than leave
 * anything out.
 */
export function recordJson(
  steps: readonly object[],
  maxBytes: number,
  { strict = false }: { strict?: boolean } = {},
): string | undefined {
  const records = steps as readonly RecordNode[];
  // Most records are small: one quick walk, then JSON.stringify as always (the hot path of every
  // execution: the writer's bookkeeping costs several times more than that walk).
  if (fitsQuickly(records, Math.min(maxBytes, QUICK_MAX_BYTES)))
    return JSON.stringify(records.map((r) => ({ ...r, input: undefined })));
  const w = new Writer({ maxBytes: maxBytes - 2, cut: true, strict });
  w.reserveTop(records);
  w.reserveNested(records, 0.5);
  w.prioritise(records[records.length - 1], 'output');
  w.prioritise(firstRespond(records), 'output');
  w.writeTop(records);
  if (w.failed) return undefined;
  return `[${w.text()}]`;
}

/** Records up to this size are measured in one quick walk and written by JSON.stringify. */
const QUICK_MAX_BYTES = 64 * 1024;

/** Whether `records` (top-level inputs left out) come to at most `limit` bytes of JSON. */
function fitsQuickly(records: readonly RecordNode[], limit: number): boolean {
  let n = 2;
  for (const r of records) {
    for (const k in r) {
      if (k === 'input' || !Object.hasOwn(r, k)) continue;
      n += quickBound(k, limit) + 2 + quickBound(r[k], limit - n);
      if (n > limit) return false;
    }
    n += 3;
  }
  return n <= limit;
}

/**
 * An upper bound of `v`'s JSON size in bytes, or some number above `limit`: at most 6 bytes a
 * UTF-16 unit (`\u0001`), 24 a number. Cheaper than JsonSizer (no regular expression, no String(n),
 * nothing remembered): the check every execution's record goes through.
 */
function quickBound(v: unknown, limit: number): number {
  switch (typeof v) {
    case 'string':
      return v.length > 64 ? stringJsonSize(v) : v.length * 6 + 2;
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'object': {
      if (v === null) return 4;
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return limit + 1;
      let n = 2;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          n += 1 + quickBound(v[i], limit - n);
          if (n > limit) return n;
        }
      } else {
        const o = v as Record<string, unknown>;
        for (const k in o) {
          if (!Object.hasOwn(o, k)) continue;
          n += quickBound(k, limit) + 2 + quickBound(o[k], limit - n);
          if (n > limit) return n;
        }
      }
      return n;
    }
    default:
      return 4; // undefined, a function: nothing, or null in an array
  }
}

/** The first `respond` step that succeeded, nested ones included (webhooks/respond.ts answers with it). */
function firstRespond(records: readonly RecordNode[]): RecordNode | undefined {
  for (const r of records) {
    if (r.type === 'respond' && r.status === 'succeeded') return r;
    const children = childrenOf(r);
    const found = children && firstRespond(children);
    if (found) return found;
  }
  return undefined;
}

/**
 * The records added or changed since they were last written (a waiting execution's checkpoints):
 * `persisted` holds the nodes written before that may still change (those going on, `waiting`)
 * with how many of their children had settled; `from` is that count for the top-level list. Those
 * nodes are written as continuations, the others whole. Nothing is cut short (a later delta must
 * find every position it continues); values past `maxBytes` are markers. Returns the delta's
 * JSON, its size, and the top-level list's settled count now; the nodes written that may still
 * change are entered in `persisted`.
 */
export function recordsDelta(
  records: readonly object[],
  persisted: WeakMap<object, number>,
  from: number,
  maxBytes: number,
): { json: string; bytes: number; settled: number } {
  const w = new Writer({ maxBytes, cut: false, persisted });
  w.reserveTop(records as readonly RecordNode[], from);
  w.writeTop(records as readonly RecordNode[]);
  // Only now: whether a node continues was decided by what was written before this delta.
  for (const node of w.written) {
    const children = childrenOf(node);
    if (isOpen(node) && children) persisted.set(node, settledCount(children));
  }
  const settled = settledCount(records as readonly RecordNode[]);
  return { json: `{"from":${from},"items":[${w.text()}]}`, bytes: w.used, settled };
}

/** Applies a `recordsDelta` to `list` (the records as the deltas before it left them). */
export function applyRecordsDelta(list: RecordNode[], delta: ListDelta): void {
  const { from, items } = delta;
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    const at = Math.min(from + k, list.length);
    const target = list[at];
    if (item['~'] !== 1 || !target) {
      list[at] = item;
      continue;
    }
    for (const key in item) {
      if (!Object.hasOwn(item, key) || key === '~') continue;
      const value = item[key];
      if (LISTS.has(key) && isListDelta(value)) {
        const children = Array.isArray(target[key]) ? (target[key] as RecordNode[]) : [];
        target[key] = children;
        applyRecordsDelta(children, value);
      } else target[key] = value;
    }
  }
}

function isListDelta(v: unknown): v is ListDelta {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ListDelta).from === 'number' &&
    Array.isArray((v as ListDelta).items)
  );
}

/** The records a series of deltas (their JSON, oldest first) make. */
export function assembleRecords(deltas: readonly string[]): RecordNode[] {
  const list: RecordNode[] = [];
  for (const d of deltas) applyRecordsDelta(list, JSON.parse(d) as ListDelta);
  return list;
}
