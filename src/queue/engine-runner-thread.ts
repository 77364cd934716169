/**
 * The executor's engine thread (see engine-runner.ts): runs executions sent by the event loop with
 * its own Engine (compile cache, outbound HTTP agent) and posts back what the event loop needs: a
 * `respond` step's response as soon as it is known, then the result, its records already as the
 * JSON the store writes (within HOOKFLOW_EXECUTION_RECORD_MAX_BYTES), its checkpoint too when it
 * waits. Nothing the event loop gets from here is bigger than that limit.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { TokenResult, TokenSource } from '../engine/credentials.js';
import type { EngineOptions, RunResult } from '../engine/run.js';
import type { EngineServices } from '../engine/services.js';
import type { ComputeSlot } from '../engine/types.js';
import type { Workflow } from '../model/workflow.js';
import { JsonSizer, recordJson } from '../model/record-json.js';
import { isPromise } from '../shared/maybe-promise.js';
import { ComputeSlots } from './compute-slots.js';
import type { FromThread, RunMessage, RunReply, ToThread } from './engine-runner.js';
import { type FileReply, ThreadFiles } from './engine-files.js';

/**
 * This thread's nice value on Linux, where each thread has its own (setpriority on the thread's
 * id). A heavy execution keeps a core busy for its whole budget; when cores are short, the event
 * loop (answering requests) and the SQLite writer (committing them) should get the CPU first.
 * With a loaded 2-core machine, the event loop's worst webhook answer while a 2 s execution ran
 * here went from 215–279 ms at the same priority to 45–138 ms (load average ~10).
 */
const ENGINE_NICE = 10;

if (process.platform === 'linux') {
  // `/proc/thread-self` links to `<pid>/task/<tid>`.
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid)) os.setPriority(tid, ENGINE_NICE);
}

// Loaded after the nice value is set: loading the engine's modules is this thread's first burst
// of CPU (~0.2 s; seconds on a busy machine). Messages wait in the port meanwhile.
const { Engine } = await import('../engine/run.js');
// A `code` step hands the trigger item to its sandbox as this JSON text, not serialised again.
const { withJson } = await import('../engine/code-sandbox.js');
const { ServiceRefusal } = await import('../engine/services.js');
const port = parentPort!;
/** File calls waiting for the event loop's answer, by number (engine-files.ts). */
const fileCalls = new Map<number, (reply: FileReply) => void>();
let fileSeq = 0;
const files = new ThreadFiles(
  (call, transfer) =>
    new Promise<FileReply>((resolve) => {
      const file = ++fileSeq;
      fileCalls.set(file, resolve);
      port.postMessage({ file, call } satisfies FromThread, transfer ?? []);
    }),
);

/** Service calls waiting for the event loop's answer (engine-runner.ts `#call`). */
const calls = new Map<number, { resolve: (value: never) => void; reject: (err: Error) => void }>();
let callSeq = 0;
const call = <T>(name: keyof EngineServices, arg: unknown): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const seq = ++callSeq;
    calls.set(seq, { resolve: resolve as (value: never) => void, reject });
    port.postMessage({ service: seq, name, arg } satisfies FromThread);
  });
const services: EngineServices = {
  dataStore: (request) => call('dataStore', request),
  startWorkflow: (request) => call('startWorkflow', request),
  workflowState: (executionId) => call('workflowState', executionId),
  waitFor: (request) => call('waitFor', request),
};

const options = workerData as EngineOptions & { computeSlots: number };
const engine = new Engine({ ...options, files, services });
// HOOKFLOW_EXECUTOR_CONCURRENCY: how many of the executions on this thread compute at once.
const slots = new ComputeSlots(options.computeSlots);
const recordMaxBytes = engine.recordMaxBytes;

// Executions' budgets count from here (engine-runner.ts `#ready`).
port.postMessage('ready' satisfies FromThread);

/** Token requests in flight (`tokens` below), by request id. */
const asked = new Map<number, (result: TokenResult) => void>();
let seq = 0;
/** OAuth2 access tokens come from the event loop, which holds the store and the client secrets. */
const tokens: TokenSource = {
  accessToken(credentialId, rejected) {
    const rid = ++seq;
    return new Promise<TokenResult>((resolve) => {
      asked.set(rid, resolve);
      port.postMessage({
        token: { rid, credentialId, ...(rejected !== undefined ? { rejected } : {}) },
      } satisfies FromThread);
    });
  },
};

port.on('message', (msg: ToThread) => {
  if (msg !== 'close' && 'answer' in msg) {
    const pending = calls.get(msg.answer);
    calls.delete(msg.answer);
    if (!pending) return;
    if (msg.error)
      pending.reject(
        msg.error.refusal
          ? new ServiceRefusal(msg.error.message, msg.error.refusal)
          : new Error(msg.error.message),
      );
    else pending.resolve(msg.value as never);
    return;
  }
  if (msg === 'close') {
    void engine.close().finally(() => port.close());
    return;
  }
  if ('forgetCredential' in msg) {
    void engine.forgetCredential(msg.forgetCredential);
    return;
  }
  if ('reply' in msg) {
    const resolve = fileCalls.get(msg.file);
    fileCalls.delete(msg.file);
    resolve?.(msg.reply);
    return;
  }
  if ('tokenReply' in msg) {
    const resolve = asked.get(msg.tokenReply.rid);
    asked.delete(msg.tokenReply.rid);
    resolve?.(msg.tokenReply.result);
    return;
  }
  if ('forgetVersions' in msg) {
    versions.clear();
    return;
  }
  if ('runs' in msg) for (const one of msg.runs) void run(one);
  else void run(msg);
});

/** The workflow versions the event loop sent, by `id@version` (it sends each once: engine-runner.ts). */
const versions = new Map<string, Workflow>();

/**
 * Replies of this turn, posted as one message once the turn's I/O is handled (engine-runner.ts
 * `#post` says why): the calls answered in one poll of the sockets end in one message.
 */
let outbox: RunReply[] = [];
const flush = () => {
  const replies = outbox;
  outbox = [];
  port.postMessage({ replies } satisfies FromThread);
};
const post = (reply: RunReply) => {
  if (outbox.length === 0) setImmediate(flush);
  outbox.push(reply);
};

async function run({ id, version, workflow: sent, trigger, ctx }: RunMessage): Promise<void> {
  if (sent) versions.set(version, sent);
  const workflow = sent ?? versions.get(version);
  if (!workflow) {
    post({
      id,
      crash: { message: `the engine thread was not sent workflow version ${version}`, stack: undefined },
    });
    return;
  }
  // Its budget counts from when it first holds a slot: the runner is told when it has to wait
  // for one (the message arrives long before any budget could run out).
  const slot = slots.slot();
  // The engine gives the slot up while a step waits on the outside world and takes it again
  // after: the worker hears of both, to count the runs that compute here (queue/slots.ts).
  let away = false;
  const compute: ComputeSlot = {
    release() {
      slot.release();
      away = true;
      post({ id, slot: 'outside' });
    },
    acquire() {
      if (away) {
        away = false;
        post({ id, slot: 'back' });
      }
      return slot.acquire();
    },
  };
  const got = slot.acquire();
  if (isPromise(got)) {
    post({ id, slot: 'queued' });
    await got;
    post({ id, slot: 'started' });
  }
  try {
    const result = await engine.run(workflow, withJson(JSON.parse(trigger), trigger), {
      compute,
      executionId: ctx.executionId,
      mode: ctx.mode,
      attempt: ctx.attempt,
      ...(ctx.resumeJson !== undefined ? { resume: ctx.resumeJson } : {}),
      ...(ctx.credentials ? { credentials: ctx.credentials, tokens } : {}),
      ...(ctx.variables ? { variables: ctx.variables } : {}),
      ...(ctx.respond ? { onRespond: (response) => early(response) && post({ id, response }) } : {}),
    });
    post({ id, result: lean(result) });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    post({ id, crash: { message: e.message, stack: e.stack } });
  } finally {
    slot.release();
  }
}

/**
 * What is recorded of a result, and no more: the step records as the JSON the store writes
 * (without top-level inputs, within the record limit: model/record-json.ts), not the objects, and
 * not the last output (also in the last step's record). Copying values back to the event loop
 * would cost it as much as parsing them there, which is what this thread is for; and a record
 * copied whole could be far bigger than anything it received (a 274 KB request made a 289 MB
 * record, JavaScript strings being shared by reference until serialised: 5 s of /healthz).
 * A waiting result's records are in its checkpoint: the store keeps no other copy meanwhile.
 */
function lean(result: RunResult): RunResult {
  const waiting = result.status === 'waiting';
  return {
    status: result.status,
    error: result.error,
    steps: [],
    output: undefined,
    ...(waiting ? {} : { record: recordJson(result.steps, recordMaxBytes)! }),
    // Waiting: when it resumes, and what its checkpoint gains (it holds no trigger item).
    ...(waiting ? { resumeAt: result.resumeAt, checkpoint: result.checkpoint } : {}),
  };
}

/**
 * Whether a `respond` step's response is posted at once. The event loop answers early only
 * responses that fit a bus notice (worker.ts, a few KB); the others are answered from the stored
 * record when the execution ends, so one bigger than this need not be copied to the event loop
 * (an amplified body could be hundreds of MB there).
 */
const EARLY_RESPONSE_MAX_BYTES = 64 * 1024;
const early = (response: unknown): boolean =>
  new JsonSizer().size(response, EARLY_RESPONSE_MAX_BYTES) <= EARLY_RESPONSE_MAX_BYTES;
