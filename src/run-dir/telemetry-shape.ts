// The shape of each agent message, checked when telemetry.ndjson is read back: a line that is
// valid JSON but lacks a field the analysis reads (a hand-edited file, another tool's output,
// an agent of another version) is skipped with a warning instead of failing deep in an
// analyzer with a TypeError. Checks what readers use, not every optional detail; fields that
// were added later stay optional.

import { arrayOf, bool, nullableNum, num, opt, record, shape, str, type Check } from './shape.js';

const histogram = shape({ count: num, min: num, mean: num, max: num, p50: num, p90: num, p99: num });
const callSite = shape({ function: str, file: str, line: num, column: num, functionLine: opt(num), functionColumn: opt(num) });
const sited = (fields: Record<string, Check>): Check => shape({ ...fields, site: opt(callSite), stack: opt(arrayOf(callSite)) });

const messages: Record<string, Check> = {
  hello: shape({ argv: arrayOf(str), cwd: str, nodeVersion: str, ppid: opt(num), clusterWorkerId: opt(num) }),
  listen: shape({ address: str, port: opt(num), pipe: opt(str), server: opt(shape({ kind: str })) }),
  sample: shape({
    intervalMs: num,
    eld: histogram,
    elu: num,
    cpu: shape({ user: num, system: num, threadUser: opt(num), threadSystem: opt(num), threadOnCpu: opt(num) }),
    mem: shape({ rss: num, heapUsed: num, heapTotal: num, external: num, arrayBuffers: num }),
    resources: record(num),
    dropped: opt(num),
    httpOther: opt(num),
    gc: opt(shape({ observedMs: num, full: num, heapAfterFull: opt(arrayOf(shape({ t: num, bytes: num }))) })),
    postLoadGc: opt(shape({ gcMs: num, heapAfter: num })),
    unanswered: opt(
      arrayOf(
        shape({
          method: str,
          route: str,
          count: num,
          oldestMs: opt(num),
          handler: opt(shape({ name: str, scriptId: str, line: num, column: num })),
        }),
      ),
    ),
    agent: opt(shape({ mainUs: num, workerUs: opt(num), profilerUs: opt(num) })),
    http: opt(
      shape({
        started: num,
        finished: num,
        active: num,
        connections: num,
        openConnections: num,
        latency: histogram,
        statusCodes: record(num),
        reused: num,
        closed: num,
        requestsPerClosedConnection: num,
        closing: opt(num),
        closeHeader: opt(num),
      }),
    ),
  }),
  gc: shape({ events: arrayOf(shape({ kind: str, start: num, durationMs: num, flags: num, heapAfter: opt(num) })) }),
  growth: shape({
    listeners: arrayOf(
      sited({
        emitter: str,
        event: str,
        count: num,
        added: num,
        current: opt(num),
        maxListeners: opt(nullableNum),
        maxListenersSite: opt(callSite),
      }),
    ),
    maxListenersDisabled: arrayOf(sited({ what: str, value: nullableNum })),
    routes: arrayOf(sited({ framework: str, method: str, path: str, count: num, stackSize: opt(num) })),
    timers: arrayOf(sited({ created: num, cleared: num, fired: num, pending: num, kind: str, delayMs: opt(num) })),
    syncCalls: arrayOf(sited({ api: str, count: num, totalMs: num })),
    outgoing: opt(
      arrayOf(
        sited({
          api: str,
          origin: str,
          count: num,
          completed: num,
          totalMs: num,
          newConnections: opt(num),
          queued: opt(num),
          socketWaitMs: opt(num),
          maxSockets: opt(num),
          concurrencyMs: opt(arrayOf(num)),
        }),
      ),
    ),
    closeHeaderSites: opt(arrayOf(shape({ count: num, site: callSite, stack: opt(arrayOf(callSite)) }))),
    handles: opt(arrayOf(sited({ api: str, resource: str, created: num, open: num, unref: opt(num), untracked: opt(num) }))),
    socketWaits: opt(
      arrayOf(
        sited({
          remote: str,
          count: num,
          completed: num,
          totalMs: num,
          concurrencyMs: opt(arrayOf(num)),
          newConnections: opt(num),
          connectSite: opt(callSite),
          connectStack: opt(arrayOf(callSite)),
        }),
      ),
    ),
    messageWaits: opt(arrayOf(sited({ target: str, count: num, completed: num, totalMs: num, concurrencyMs: opt(arrayOf(num)) }))),
    asyncStorages: opt(arrayOf(sited({ enabled: num }))),
  }),
  stall: shape({
    start: num,
    durationMs: num,
    ongoing: bool,
    cause: opt(arrayOf(shape({ share: num, stack: arrayOf(callSite), line: opt(num) }))),
    threadCpuMs: opt(num),
    threadCpuOverMs: opt(num),
    heapAfter: opt(num),
  }),
  profile: shape({ kind: (v) => v === 'cpu' || v === 'heap' || v === 'heap-retained', file: str, start: num, end: num }),
  'agent-error': shape({ what: str, message: str }),
  'call-window': shape({ start: num }),
  'throw-watch': shape({ start: num }),
  primary: shape({
    role: (v) => v === 'cluster-primary',
    intervalMs: num,
    cpu: shape({ user: num, system: num }),
    agentUs: num,
    elu: num,
    eld: histogram,
    mem: shape({ rss: num, heapUsed: num, heapTotal: num }),
    heldSockets: num,
    handedOff: record(num),
    refused: opt(num),
    workers: num,
    schedulingPolicy: opt(num),
    forkSite: opt(arrayOf(callSite)),
  }),
};

/** Whether `m` (an object with a string `type`, numeric pid, threadId) has the fields of its type; unknown types pass (they are ignored). */
export function hasMessageShape(m: Record<string, unknown>): boolean {
  if (!num(m.t)) return false;
  const check = messages[m.type as string];
  return check === undefined || check(m);
}
