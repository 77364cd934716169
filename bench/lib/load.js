/** Load generation (autocannon, one timed sender, the big upload) and what is measured meanwhile. */
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { MiB, mean, sleep } from './util.js';
import fs from 'node:fs';

export const BODY = 'param1=a&param2=b';
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
// The backlog of one round is at most duration × throughput; a queue that has not drained in this
// long is reported as a failure rather than waited for.
export const DRAIN_LIMIT_MS = 60_000;
export const RSS_POLL_MS = 100;
export const UPLOAD_BYTES = 16 * MiB;

/**
 * An autocannon run. `timed`: every answer's latency is kept too (autocannon's own percentiles are
 * whole milliseconds), as `result.latencies`, so that the slices of a round give exact percentiles
 * together (mergeSlices).
 */
export async function load(url, seconds, conns, { timed = false } = {}) {
  const run = autocannon({
    url,
    method: 'POST',
    headers: FORM,
    body: BODY,
    connections: conns,
    duration: seconds,
  });
  const latencies = [];
  if (timed) run.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await run;
  return timed ? { ...result, latency: latencyFigures(latencies), latencies } : result;
}

/**
 * The `single` case: one sender on one keep-alive connection, each request sent when the previous
 * answer is in, its latency timed with performance.now(). Not autocannon: its latency histogram
 * keeps whole milliseconds (hdr-histogram, lowest discernible value 1 ms), so below 1 ms its p50
 * is 0 and its mean only the share of answers that took 1 ms or more (0.03 "ms" for answers of
 * ~0.4 ms). A plain socket rather than node:http's client, whose own ~50 µs a request would count
 * as the server's. Returns what `loadFigures` reads of an autocannon result.
 */
export function oneSender(url, seconds) {
  const { hostname, port, pathname } = new URL(url);
  const request = Buffer.from(
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: ${FORM['content-type']}\r\n` +
      `Content-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`,
  );
  const latencies = [];
  const counts = { ok: 0, non2xx: 0 };
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.setNoDelay(true);
    const deadline = performance.now() + seconds * 1000;
    let pending = Buffer.alloc(0);
    let sentAt = 0;
    const send = () => {
      sentAt = performance.now();
      socket.write(request);
    };
    socket.on('connect', send);
    socket.on('error', reject);
    // The server may close the connection (a refusal with `connection: close`): the run ends there.
    socket.on('close', () => resolve(senderResult(latencies, counts, seconds)));
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const headEnd = pending.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const head = pending.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (pending.length < headEnd + 4 + length) return;
      const now = performance.now();
      latencies.push(now - sentAt);
      if (/^HTTP\/1\.1 2\d\d /.test(head)) counts.ok++;
      else counts.non2xx++;
      pending = pending.subarray(headEnd + 4 + length);
      if (now < deadline) send();
      else socket.end();
    });
  });
}

/** `oneSender`'s figures in the shape of an autocannon result (milliseconds with decimals). */
export function senderResult(latencies, { ok, non2xx }, seconds) {
  return {
    requests: { average: latencies.length / seconds, total: latencies.length },
    latency: latencyFigures(latencies),
    latencies,
    '2xx': ok,
    non2xx,
    errors: 0,
    timeouts: 0,
  };
}

/** p50, p99 and mean of latencies in milliseconds. */
export function latencyFigures(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), mean: mean(latencies) };
}

/** What the report keeps of an autocannon result. */
export function loadFigures(result) {
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    // autocannon's own are whole milliseconds (`load` with `timed`, and `oneSender`, are not).
    meanMs: result.latency.mean,
    p99Ms: result.latency.p99,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Waits until no execution is queued or running; returns how long that took. */
export async function drain(api, child) {
  const started = Date.now();
  for (;;) {
    child.assertAlive();
    const [queued, running] = await Promise.all([
      api('GET', '/api/v1/executions?status=queued&limit=1'),
      api('GET', '/api/v1/executions?status=running&limit=1'),
    ]);
    if (queued.items.length === 0 && running.items.length === 0)
      return { ok: true, ms: Date.now() - started };
    if (Date.now() - started > DRAIN_LIMIT_MS) return { ok: false, ms: Date.now() - started };
    await sleep(50);
  }
}

/** Samples VmRSS while a run lasts (the kernel's VmHWM only knows the peak over the whole life). */
export function pollRss(pid) {
  let peak = readProcStatus(pid, 'VmRSS') ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, readProcStatus(pid, 'VmRSS') ?? 0);
  }, RSS_POLL_MS);
  return {
    stop() {
      clearInterval(timer);
      const last = readProcStatus(pid, 'VmRSS');
      return last === undefined && peak === 0 ? undefined : Math.max(peak, last ?? 0);
    },
  };
}

/** A field of /proc/<pid>/status in bytes (Linux only; undefined elsewhere). */
export function readProcStatus(pid, field) {
  try {
    const m = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}

/** Sum of a Prometheus counter's samples whose labels pass `keep`. */
export function sumCounter(text, name, keep) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const m = line.match(/^[^{]+\{([^}]*)\}\s+(\S+)/);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (keep(labels)) sum += Number(m[2]);
  }
  return sum;
}

/** Counted in the SQLite file itself: the API pages executions 200 at a time, too slow for ~10⁵ rows. */
export function countExecutions(dataDir, where, ...params) {
  const db = new Database(path.join(dataDir, 'hookflow.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT count(*) AS n FROM executions WHERE ${where}`).get(...params).n;
  } finally {
    db.close();
  }
}

/**
 * What a 16 MiB upload costs in memory while it is stored: the peak RSS of hookflow during the
 * request minus its RSS just before, sampled every 5 ms; the largest of three tries per kind. The
 * first upload of a process is reported apart: it also grows the allocator once (glibc serves big
 * buffers from mmap until the first is freed, then from its heap, which keeps the pages): ~36 MB
 * here, whichever kind comes first.
 */
export async function uploadCost(url, pid) {
  const data = Buffer.alloc(UPLOAD_BYTES - 4096, 'x');
  const boundary = 'hookflow-bench-boundary';
  const multipart = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const kinds = {
    multipart: { body: multipart, type: `multipart/form-data; boundary=${boundary}` },
    raw: { body: Buffer.alloc(UPLOAD_BYTES, 'y'), type: 'application/octet-stream' },
  };
  const out = { sizeBytes: UPLOAD_BYTES, ok2xx: 0 };
  const send = async (kind) => {
    const { body, type } = kinds[kind];
    await sleep(300);
    const before = readProcStatus(pid, 'VmRSS') ?? 0;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, readProcStatus(pid, 'VmRSS') ?? 0);
    }, 5);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
    await res.arrayBuffer();
    clearInterval(timer);
    peak = Math.max(peak, readProcStatus(pid, 'VmRSS') ?? 0);
    if (!res.ok) throw new Error(`upload (${kind}) answered ${res.status}`);
    out.ok2xx++;
    return peak - before;
  };
  const first = await send('raw');
  out.first = { addedRssBytes: first, factor: first / UPLOAD_BYTES };
  for (const kind of Object.keys(kinds)) {
    let worst = 0;
    for (let i = 0; i < 3; i++) worst = Math.max(worst, await send(kind));
    out[kind] = { addedRssBytes: worst, factor: worst / UPLOAD_BYTES };
  }
  return out;
}
