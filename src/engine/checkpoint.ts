/**
 * A waiting execution's checkpoint, written in parts so that parking again costs what changed
 * since the last park, not everything so far. A `wait` (or an `http` retry pause) inside a
 * `forEach` parks once per element; a checkpoint holding all the elements, the outputs so far and
 * the records so far at every park wrote O(n²): 400 lines of 2 KB came to 3.2 GB and 50 s of CPU.
 *
 * Stored as a small head (the `resume_state` column, rewritten at each park) and one part per park
 * (an `execution_checkpoints` row, appended in the transaction that records the park):
 * - values the run resumes with (`$steps`, the inputs of the steps it stands in, a loop's
 *   elements, the `respond` step's response) go into the part that first needs them, under an id;
 *   the head refers to them by id, so a value that did not change (a loop's 400 elements, an
 *   earlier step's big output) is written once however often the run parks;
 * - a loop's outputs so far are appended: each park writes the outputs added since the last one;
 * - the records so far go as a delta (model/record-json.ts `recordsDelta`): records finished since
 *   the last park, whole, and the ones still going on (the `forEach` and its iteration) as the
 *   fields that changed.
 * Resuming reads the head and every part, oldest first (reading is linear in what the run holds,
 * as reading its trigger item is). The head also carries the compute time used so far: the
 * execution's budget counts across resumes, time spent waiting aside.
 *
 * What a checkpoint may hold in all is bounded (`stateMaxBytes`): values cannot be left out of it
 * (the run needs them), so a run whose resumable state would pass the bound fails rather than parks.
 */
import { defineEntry } from './expressions.js';
import type { ExecutionError } from '../model/execution.js';
import {
  applyRecordsDelta,
  JsonSizer,
  type ListDelta,
  type RecordNode,
  recordsDelta,
  settledCount,
} from '../model/record-json.js';

/** The response a `respond` step set (RunResult.response). */
type Response = { status: number; headers: Record<string, string>; body: unknown };

/**
 * Where a parked run stands, one frame per step list from the top: `i` is the step's index in that
 * list, `input` its input (`t` instead when that is the trigger item, which the checkpoint never
 * holds); a frame of an `if`/`switch` says which `branch` ran, of a `forEach` which iteration
 * (`each`: the elements, the iteration's index and the outputs gathered so far).
 */
export interface Frame {
  i: number;
  input?: unknown;
  t?: 1;
  branch?: 'then' | 'else' | 'default' | number;
  each?: { index: number; items: unknown[]; outputs: unknown[] };
}

/** A checkpoint as the run sees it. */
export interface Checkpoint {
  /** Outermost frame first; the last one is the parked step's. */
  at: Frame[];
  /** What the parked step gave with `park`. */
  state: unknown;
  /** `$steps` so far. */
  steps: Record<string, unknown>;
  /** The records so far (steps holding steps with their nested records; the parked one `waiting`). */
  records: RecordNode[];
  response?: Response | undefined;
  /** Compute time the execution has used so far (ms), parked time excluded. */
  elapsedMs: number;
}

/** One park's writes: the new head and the part to append. */
export interface CheckpointWrite {
  /** The head's JSON (`resume_state`). */
  head: string;
  /** The part's number: 1 for the first park, then one more each time. */
  seq: number;
  /** The part: values and outputs (`state`), and the records' delta (`records`), as JSON. */
  part: { state: string; records: string };
}

/** Values under this id are `undefined` (JSON has no such value). */
const UNDEFINED_ID = 0;

/** Strings at least this long are written once and referred to by id, like objects. */
const SHARED_STRING = 64;

interface HeadFrame {
  i: number;
  t?: 1;
  input?: number;
  branch?: Frame['branch'];
  each?: { index: number; items: number; outputs: number };
}

interface Head {
  v: 2;
  /** The parts this head goes with: 1…parts. */
  parts: number;
  elapsedMs: number;
  at: HeadFrame[];
  state: unknown;
  steps: Record<string, number>;
  response?: number;
  /** The next id to give a value. */
  next: number;
  /** What the parts hold in all: record bytes, state bytes (for the bounds). */
  bytes: [number, number];
}

interface StatePart {
  values: [number, unknown][];
  outputs: [number, number, unknown[]][];
}

/** The checkpoint as stored, for `RunContext.resume`: the head's JSON and each part's, oldest first. */
export function checkpointJson(head: string, parts: readonly { state: string; records: string }[]): string {
  return `{"head":${head},"parts":[${parts.map((p) => `{"s":${p.state},"r":${p.records}}`).join(',')}]}`;
}

/** The run's resumable state would pass the bound: it fails instead of parking. */
export class CheckpointTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(
      `The execution cannot wait: what it would resume with passes ${maxBytes} bytes (8 × HOOKFLOW_EXECUTION_RECORD_MAX_BYTES). Keep less in the steps before the wait, or in the items of a loop that waits.`,
    );
    this.name = 'CheckpointTooLarge';
  }
}

/** The error a run that could not park records. */
export function checkpointError(err: CheckpointTooLarge, step: string): ExecutionError {
  return { step, message: err.message, code: 'checkpoint_too_large' };
}

/**
 * What this execution's stored checkpoint holds, so the next park writes only what is new: the ids
 * of the values written, how much of each loop's outputs, and which records were going on. Made
 * at the first park (a run that never parks pays nothing), or by `load` when a run resumes.
 */
export class CheckpointLog {
  readonly #recordMax: number;
  readonly #stateMax: number;
  #seq = 0;
  #next = 1;
  readonly #objectIds = new WeakMap<object, number>();
  readonly #stringIds = new Map<string, number>();
  readonly #outputs = new WeakMap<unknown[], { id: number; length: number }>();
  readonly #persisted = new WeakMap<object, number>();
  #topSettled = 0;
  #recordBytes = 0;
  #stateBytes = 0;

  constructor({ recordMaxBytes, stateMaxBytes }: { recordMaxBytes: number; stateMaxBytes: number }) {
    this.#recordMax = recordMaxBytes;
    this.#stateMax = stateMaxBytes;
  }

  /** The head and the part of a park with `c` (throws CheckpointTooLarge past the bound). */
  write(c: Checkpoint): CheckpointWrite {
    const sizer = new JsonSizer();
    const values: string[] = [];
    const appends: string[] = [];
    let stateBytes = this.#stateBytes;
    // Ids given in this write are kept only if it completes (a failed write leaves the log as it was).
    const given: (() => void)[] = [];
    // Ids given in this write, for a value met twice in it (a step's output that is the next one's input).
    const fresh = new Map<unknown, number>();
    const add = (v: unknown): string => {
      const room = this.#stateMax - stateBytes;
      const size = sizer.size(v, room);
      if (size > room) throw new CheckpointTooLarge(this.#stateMax);
      stateBytes += size;
      return JSON.stringify(v) ?? 'null';
    };
    const ref = (v: unknown): number => {
      if (v === undefined) return UNDEFINED_ID;
      if (typeof v === 'object' && v !== null) {
        const id = this.#objectIds.get(v);
        if (id !== undefined) return id;
      } else if (typeof v === 'string' && v.length >= SHARED_STRING) {
        const id = this.#stringIds.get(v);
        if (id !== undefined) return id;
      }
      const known = fresh.get(v);
      if (known !== undefined) return known;
      const id = this.#next++;
      values.push(`[${id},${add(v)}]`);
      if ((typeof v === 'object' && v !== null) || (typeof v === 'string' && v.length >= SHARED_STRING)) {
        fresh.set(v, id);
        given.push(() => this.#remember(v, id));
      }
      return id;
    };
    const outputsRef = (outputs: unknown[]): number => {
      let track = this.#outputs.get(outputs);
      if (!track) {
        track = { id: this.#next++, length: 0 };
        const t = track;
        given.push(() => this.#outputs.set(outputs, t));
      }
      if (outputs.length > track.length) {
        const from = track.length;
        const added = outputs.slice(from).map(add);
        appends.push(`[${track.id},${from},[${added.join(',')}]]`);
        const t = track;
        const length = outputs.length;
        given.push(() => {
          t.length = length;
        });
      }
      return track.id;
    };

    const at: HeadFrame[] = c.at.map((f) => {
      const frame: HeadFrame = { i: f.i };
      if (f.t === 1) frame.t = 1;
      else frame.input = ref(f.input);
      if (f.branch !== undefined) frame.branch = f.branch;
      if (f.each)
        frame.each = { index: f.each.index, items: ref(f.each.items), outputs: outputsRef(f.each.outputs) };
      return frame;
    });
    const steps: Record<string, number> = {};
    for (const name of Object.keys(c.steps)) defineEntry(steps, name, ref(c.steps[name]));
    const response = c.response === undefined ? undefined : ref(c.response);
    const state = c.state ?? null;
    add(state);

    const delta = recordsDelta(
      c.records,
      this.#persisted,
      this.#topSettled,
      Math.max(0, this.#recordMax - this.#recordBytes),
    );
    for (const keep of given) keep();
    this.#topSettled = delta.settled;
    this.#recordBytes += delta.bytes;
    this.#stateBytes = stateBytes;
    this.#seq++;
    const head: Head = {
      v: 2,
      parts: this.#seq,
      elapsedMs: Math.round(c.elapsedMs),
      at,
      state,
      steps,
      ...(response !== undefined ? { response } : {}),
      next: this.#next,
      bytes: [this.#recordBytes, this.#stateBytes],
    };
    return {
      head: JSON.stringify(head),
      seq: this.#seq,
      part: {
        state: `{"values":[${values.join(',')}],"outputs":[${appends.join(',')}]}`,
        records: delta.json,
      },
    };
  }

  #remember(v: unknown, id: number): void {
    if (typeof v === 'object' && v !== null) this.#objectIds.set(v, id);
    else if (typeof v === 'string' && v.length >= SHARED_STRING) this.#stringIds.set(v, id);
  }

  /**
   * A stored checkpoint (`checkpointJson`'s text, parsed here) as the run resumes from it, with the
   * log that continues it; undefined when it is not one this engine wrote. A checkpoint of the
   * first format (one JSON value holding everything, no parts) is read too: its next park writes
   * everything once, as the first part.
   */
  static load(
    json: string,
    limits: { recordMaxBytes: number; stateMaxBytes: number },
  ): { checkpoint: Checkpoint; log: CheckpointLog } | undefined {
    let stored: { head?: unknown; parts?: unknown };
    try {
      stored = JSON.parse(json) as typeof stored;
    } catch {
      return undefined;
    }
    const log = new CheckpointLog(limits);
    const head = stored?.head as Partial<Head> | undefined;
    if (typeof head !== 'object' || head === null) return undefined;
    if ((head as { v?: unknown }).v === 1) {
      const c = firstFormat(head);
      return c && { checkpoint: c, log };
    }
    if (head.v !== 2 || !Array.isArray(head.at) || head.at.length === 0 || !Array.isArray(stored.parts))
      return undefined;
    if (typeof head.steps !== 'object' || head.steps === null || stored.parts.length !== head.parts)
      return undefined;
    const values = new Map<number, unknown>();
    const outputs = new Map<number, unknown[]>();
    const records: RecordNode[] = [];
    for (const part of stored.parts as { s: StatePart; r: ListDelta }[]) {
      for (const [id, v] of part.s?.values ?? []) {
        values.set(id, v);
        log.#remember(v, id);
      }
      for (const [id, from, added] of part.s?.outputs ?? []) {
        let list = outputs.get(id);
        if (!list) {
          list = [];
          outputs.set(id, list);
        }
        list.length = from;
        for (const v of added) list.push(v);
      }
      if (part.r) applyRecordsDelta(records, part.r);
    }
    const value = (id: number | undefined) => (id === undefined ? undefined : values.get(id));
    const loopOutputs = (id: number): unknown[] => {
      let list = outputs.get(id);
      if (!list) {
        list = [];
        outputs.set(id, list);
      }
      return list;
    };
    const at: Frame[] = head.at.map((f) => {
      const frame: Frame = { i: f.i };
      if (f.t === 1) frame.t = 1;
      else frame.input = value(f.input);
      if (f.branch !== undefined) frame.branch = f.branch;
      if (f.each)
        frame.each = {
          index: f.each.index,
          items: value(f.each.items) as unknown[],
          outputs: loopOutputs(f.each.outputs),
        };
      return frame;
    });
    if (at.some((f) => f.each !== undefined && !Array.isArray(f.each.items))) return undefined;
    const steps: Record<string, unknown> = {};
    for (const name of Object.keys(head.steps)) defineEntry(steps, name, value(head.steps[name]));
    for (const [id, list] of outputs) log.#outputs.set(list, { id, length: list.length });
    log.#markPersisted(records);
    log.#topSettled = settledCount(records);
    log.#seq = head.parts ?? 0;
    log.#next = head.next ?? 1;
    log.#recordBytes = head.bytes?.[0] ?? 0;
    log.#stateBytes = head.bytes?.[1] ?? 0;
    return {
      checkpoint: {
        at,
        state: head.state,
        steps,
        records,
        response: value(head.response) as Response | undefined,
        elapsedMs: typeof head.elapsedMs === 'number' ? head.elapsedMs : 0,
      },
      log,
    };
  }

  /** The nodes going on (the parked step's containers and iterations): continued by the next delta. */
  #markPersisted(list: readonly RecordNode[]): void {
    const last = list[list.length - 1];
    if (last?.status !== 'waiting') return;
    const children = Array.isArray(last.iterations)
      ? (last.iterations as RecordNode[])
      : Array.isArray(last.steps)
        ? (last.steps as RecordNode[])
        : undefined;
    if (!children) return;
    this.#persisted.set(last, settledCount(children));
    this.#markPersisted(children);
  }
}

/** A checkpoint of the first format: `{v: 1, at, state, steps, records, response?}` in one value. */
function firstFormat(c: Record<string, unknown>): Checkpoint | undefined {
  if (!Array.isArray(c.at) || c.at.length === 0 || !Array.isArray(c.records)) return undefined;
  if (typeof c.steps !== 'object' || c.steps === null) return undefined;
  return {
    at: c.at as Frame[],
    state: c.state,
    steps: c.steps as Record<string, unknown>,
    records: c.records as RecordNode[],
    response: c.response as Response | undefined,
    elapsedMs: 0,
  };
}
