/**
 * A code thread (threads.ts starts them): loads QuickJS, says 'ready', then runs the jobs it is
 * sent, one at a time, answering each. It holds nothing but the sandbox; its owner terminates it
 * when a run overstays its limit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type CodeJob, type CodeReply, codeSandboxWarm, runJob, warmCodeSandbox } from './quickjs.js';

const port = parentPort!;
const { memoryBytes } = workerData as { memoryBytes: number };
await warmCodeSandbox(memoryBytes);
port.postMessage('ready');
// One job at a time: the owner posts the next once this one is answered (and the thread is ready
// again, when the run left the sandbox to be made again).
port.on('message', (job: CodeJob) => {
  void runJob(job)
    .catch(
      (err: unknown): CodeReply => ({
        id: job.id,
        ok: false,
        error: { message: `The code sandbox failed: ${err instanceof Error ? err.message : String(err)}` },
        logs: [],
      }),
    )
    .then(async (reply) => {
      if (codeSandboxWarm(job.memoryBytes)) {
        port.postMessage(reply);
        return;
      }
      port.postMessage({ ...reply, rebuilding: true });
      await warmCodeSandbox(job.memoryBytes).catch(() => undefined);
      port.postMessage('ready');
    });
});
