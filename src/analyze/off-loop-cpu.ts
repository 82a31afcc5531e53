// CPU off the event loop: requests are slow and the process burns cores while its event loop is
// mostly idle, because the work runs elsewhere: on libuv's thread pool (async crypto such as
// pbkdf2/scrypt, async zlib; 4 threads unless UV_THREADPOOL_SIZE says otherwise) or in worker
// threads created per request. Requests then queue for the pool or for worker start-up, which
// io-wait would misread as waiting on I/O. The main thread's CPU profile names the API and the
// app function that submits the work (the culprit) when it caught the hand-over; a pool of workers
// the app keeps is named from the agent's message waits instead (postMessage is rarely sampled).

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import type { CallTree } from '../profile/call-tree.js';
import { loopStats } from './signals/loop-stats.js';
import { perRun } from '../run-dir/per-run.js';
import { targetThreads } from './signals/load-window.js';
import { agentCost } from './signals/agent-cost.js';
import { loopThreadsCpuMs, processCpu } from './signals/process-cpu.js';
import { cpuViewOf, treeOf } from './signals/cpu-view.js';
import { firstAppAncestor } from '../profile/attribution.js';
import { describeCulprit, frameCulprit, siteCulprit } from './signals/culprit.js';
import { busiestThread, loadWindow } from './signals/load-window.js';
import { messageWaits } from './signals/message-waits.js';
import type { Culprit } from './finding.js';
import type { CallSite } from '../agent/protocol.js';
import { round } from './signals/stats.js';
import { offLoopAdvice, type OffLoopKind } from './off-loop-cpu.advice.js';

/**
 * The least share of the target's own CPU (the process's, less the agent's threads) that ran
 * outside its event loops. When the serving threads' CPU is measured (node's own figure on 23.9+,
 * the agent worker's /proc reading of the main thread on Linux elsewhere), the share alone
 * decides: a starved target keeps it (beside a CPU hog, a pbkdf2 login got 0.29 cores, 92 % of
 * them off the loop, against 13-19 % for the I/O-bound scenarios). Without that measure the
 * loop's part is its utilization, which misses its CPU outside JS (an idle loop read 0.03 against
 * 0.08 cores of the process): then the off-loop CPU must also reach OFF_LOOP_MIN_CORES.
 */
export const OFF_LOOP_MIN_SHARE = 0.5;
/** Cores used outside the event loop worth a finding when the loops' own CPU is not measured. */
export const OFF_LOOP_MIN_CORES = 0.4;
/** Requests must be slow for the queueing to matter (ms, server-side p50). */
export const OFF_LOOP_MIN_LATENCY_MS = 20;

/** APIs that hand CPU work to libuv's pool or to a new thread, by node's file and function. */
const OFFLOADERS: { file: RegExp; name: RegExp; kind: OffLoopKind; api: (name: string) => string }[] = [
  {
    file: /^node:internal\/crypto\//,
    name: /^(pbkdf2|scrypt|hkdf|generateKeyPair|randomBytes|randomFill|generatePrime|checkPrime)$/,
    kind: 'thread-pool',
    api: (n) => `crypto.${n}`,
  },
  {
    file: /^node:zlib$/,
    name: /^(gzip|gunzip|deflate|inflate|deflateRaw|inflateRaw|unzip|brotliCompress|brotliDecompress|zlibBuffer)$/,
    kind: 'thread-pool',
    api: (n) => (n === 'zlibBuffer' ? 'zlib (async)' : `zlib.${n}`),
  },
  { file: /^node:internal\/worker$/, name: /^Worker$/, kind: 'worker-threads', api: () => 'new Worker()' },
];

/**
 * The process's cores beyond its event loops, when they are enough to make slow requests queue
 * (the finding's condition, without the profile search); io-wait reads it too.
 */
export function offLoopCores(run: RunData): { processCores: number; offLoop: number } | undefined {
  const s = loopStats(run);
  if (!s || s.requests === 0 || s.latencyP50Ms < OFF_LOOP_MIN_LATENCY_MS) return undefined;
  const processCores = processCpu(run).cores;
  const threads = targetThreads(run);
  const cost = agentCost(run);
  // The agent's worker and V8's profiler thread run off the loop too, for the agent.
  const agentCores = cost && s.durationMs > 0 ? (cost.workerMs + cost.profilerThreadMs) / s.durationMs : 0;
  const own = processCores - agentCores;
  const loopMs = loopThreadsCpuMs(run);
  const measured = loopMs !== undefined && s.durationMs > 0;
  const offLoop = own - (measured ? loopMs / s.durationMs : s.eluMean * threads.length);
  if (offLoop <= 0 || offLoop < OFF_LOOP_MIN_SHARE * own) return undefined;
  // The app seen handing CPU work over (an app function above pbkdf2, async zlib, new Worker) is direct evidence.
  const enough = measured || offLoop >= OFF_LOOP_MIN_CORES || (handOver(run)?.submit?.frame ?? -1) >= 0;
  return enough ? { processCores, offLoop } : undefined;
}

/**
 * The offloading call the main thread's CPU profile caught, with the tree it is in: the load
 * window's first, the whole profile's when the window missed it (the hand-over takes tens of µs a
 * call). Undefined without a CPU profile.
 */
const handOver = perRun((run: RunData): { tree: CallTree; submit?: Submitter } | undefined => {
  const view = cpuViewOf(run);
  if (!view) return undefined;
  const submit = submitter(view.tree);
  if (submit) return { tree: view.tree, submit };
  const tree = treeOf(run, view.profile, view.ref);
  return { tree, submit: submitter(tree) };
});

export function offLoopCpu(run: RunData): Finding[] {
  const s = loopStats(run);
  const cores = offLoopCores(run);
  if (!s || !cores) return [];
  const { processCores, offLoop } = cores;
  const found = handOver(run);
  const tree = found?.tree;
  const submit = found?.submit;
  const profiled = tree && submit && submit.frame >= 0 ? frameCulprit(tree.frames[submit.frame], run.cwd) : undefined;
  // A long-lived pool hands work over with postMessage, which the profile rarely catches: the agent's message waits name it.
  const pool = submit ? undefined : workerPoolWait(run, s.requests);
  const culprit = profiled ?? pool?.culprit;
  const where = pool
    ? 'worker threads'
    : !submit
      ? "libuv's thread pool or worker threads"
      : submit.kind === 'thread-pool'
        ? "libuv's thread pool"
        : 'worker threads';
  return [
    {
      code: 'HOTPATH_OFF_LOOP_CPU',
      category: 'off-loop-cpu',
      severity: 'warning',
      title: !submit
        ? 'CPU work off the event loop makes requests queue'
        : submit.kind === 'thread-pool'
          ? "CPU work saturates libuv's thread pool"
          : 'New worker threads on the request path keep the CPU busy',
      summary:
        `The process used ${round(processCores, 2)} cores while its event loop was busy only ${round(s.eluMean * 100, 0)} %: ` +
        `${round(offLoop, 2)} cores of work ran on ${where}, and requests waited for it (latency p50 ${round(s.latencyP50Ms, 1)} ms, ` +
        `${round(s.cpuPerRequestMs, 2)} ms of CPU per request).` +
        (submit
          ? ` The work is ${submit.api}${culprit ? `, called from ${describeCulprit(culprit)}` : ''}.`
          : pool
            ? pool.text
            : ' The CPU profile did not catch the call that hands it over (async crypto or zlib, new Worker()).'),
      evidence: {
        processCores: round(processCores, 3),
        loopUtilization: round(s.eluMean, 3),
        offLoopCores: round(offLoop, 3),
        latencyP50Ms: round(s.latencyP50Ms, 2),
        cpuPerRequestMs: round(s.cpuPerRequestMs, 3),
        ...(submit ? { api: submit.api, kind: submit.kind } : {}),
        ...(pool ? { kind: 'worker-threads', ...pool.evidence } : {}),
      },
      ...(culprit ? { culprit } : {}),
      recommendation: offLoopAdvice(submit?.kind, pool !== undefined),
      impact: Math.min(1, offLoop / Math.max(processCores, 1e-9)),
    },
  ];
}

interface Submitter {
  api: string;
  kind: OffLoopKind;
  /** The app function above the call (-1: none). */
  frame: number;
}

/** The offloading API with the most sampled time in the tree, and the app function above it. */
function submitter(tree: CallTree): Submitter | undefined {
  const byKey = new Map<string, { api: string; kind: OffLoopKind; frame: number; us: number }>();
  for (let i = 1; i < tree.frame.length; i++) {
    const f = tree.frames[tree.frame[i]];
    const match = f.kind === 'node-core' ? OFFLOADERS.find((o) => o.file.test(f.file) && o.name.test(f.name)) : undefined;
    if (!match) continue;
    const app = firstAppAncestor(tree, i);
    const frame = app >= 0 ? tree.frame[app] : -1;
    const api = match.api(f.name);
    const key = `${api}\u0000${frame}`;
    const e = byKey.get(key) ?? { api, kind: match.kind, frame, us: 0 };
    e.us += tree.total[i];
    byKey.set(key, e);
  }
  return [...byKey.values()].sort((a, b) => b.us - a.us)[0];
}

/**
 * Messages to a worker thread per request (answered in the load window) for the requests to be
 * feeding a worker pool: most of them send their work there.
 */
export const WORKER_MESSAGES_MIN_PER_REQUEST = 0.5;

/**
 * Requests waiting on a worker thread the app keeps (a pool fed with postMessage): the agent's
 * message waits, when most requests send one. Only the wait from the send to the answer is
 * seen (a pool's own queue before the send is not), so it is told, not weighed. The culprit is where the request path
 * enters the code that sends (the outermost app function of the sending site's file on the
 * captured stack: a pool's `run`, not its internal dispatcher), with the site and the caller.
 */
function workerPoolWait(run: RunData, requests: number): { culprit: Culprit; text: string; evidence: Record<string, unknown> } | undefined {
  const w = loadWindow(run);
  const thread = busiestThread(run, w);
  if (!thread || requests <= 0) return undefined;
  const wait = messageWaits(thread, w).find((m) => m.origin === 'worker thread');
  if (!wait?.site || wait.completed / requests < WORKER_MESSAGES_MIN_PER_REQUEST) return undefined;
  const chain: CallSite[] = [wait.site, ...(wait.caller ? [wait.caller] : []), ...(wait.through ?? [])];
  let entry = 0;
  while (entry + 1 < chain.length && chain[entry + 1].file === wait.site.file) entry++;
  const culprit = siteCulprit(chain[entry], run.cwd);
  const sent = siteCulprit(wait.site, run.cwd);
  const from = chain[entry + 1] ? siteCulprit(chain[entry + 1], run.cwd) : undefined;
  const perRequest = wait.completed / requests;
  const meanMs = wait.totalMs / wait.completed;
  const busy = busiestLevel(wait.concurrencyMs);
  const text =
    ` Requests wait on worker threads: ${round(perRequest, 1)} message${perRequest === 1 ? '' : 's'} per request, ` +
    `${round(meanMs, 1)} ms on average from the send (${sent.file}:${sent.line}) to the answer` +
    (busy ? `, ${busy.level}${busy.last ? ' or more' : ''} in flight ${round(busy.share * 100, 0)} % of the time` : '') +
    `, through ${describeCulprit(culprit)}${from ? `, called from ${describeCulprit(from)}` : ''}: the workers are too few for the work sent.`;
  return {
    culprit,
    text,
    evidence: {
      workerMessagesPerRequest: round(perRequest, 2),
      workerWaitMeanMs: round(meanMs, 1),
      ...(busy ? { workersInFlight: busy.level, workersInFlightShare: round(busy.share, 3) } : {}),
      sentAt: `${sent.file}:${sent.line}`,
    },
  };
}

/** The number of calls in flight that held the most of the window's time (the last level: that many or more). */
function busiestLevel(ms: readonly number[] | undefined): { level: number; share: number; last: boolean } | undefined {
  const total = (ms ?? []).reduce((a, b) => a + b, 0);
  if (!ms || total <= 0) return undefined;
  const level = ms.indexOf(Math.max(...ms));
  return level > 0 ? { level, share: ms[level] / total, last: level === ms.length - 1 } : undefined;
}
