// The cluster primary's own telemetry (PrimaryMessage): under round-robin scheduling the
// primary accepts every connection and hands it to a worker, so its CPU, loop and held sockets
// grow with the connection rate. Everything is read, nothing is patched:
//
//   connections ──▶ primary: accept, queue (round_robin_handle), send over IPC ──▶ worker
//                                                                  ◀── { ack, accepted } ──┘
//
// - hand-offs: each worker answers every hand-off with `{ cmd: 'NODE_CLUSTER', ack, accepted }`,
//   an `internalMessage` of its ChildProcess; one more listener there counts them per worker.
// - held sockets: the accepted sockets the primary still holds are its `TCPSocketWrap`
//   resources (process.getActiveResourcesInfo()): queued for a worker or not yet closed.
// Node's own structures (the RoundRobinHandle and its queue) are module-private and left alone.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { CallStack, PrimaryMessage } from '../protocol.js';
import { LoopDelay } from './loop-delay.js';
import { listen } from '../originals.js';
import { ownTime } from '../own-time.js';
import { threadState } from '../thread-state.js';
import { MemoryReader } from './sampler.js';

type PrimaryBody = Omit<PrimaryMessage, 'v' | 'pid' | 'threadId' | 't'>;

/** The resource type of an accepted TCP socket in getActiveResourcesInfo(). */
export const HELD_SOCKET_RESOURCE = 'TCPSocketWrap';

interface ClusterWorker {
  id: number;
  process?: NodeJS.EventEmitter;
  isDead?: () => boolean;
}
interface ClusterLike extends NodeJS.EventEmitter {
  workers?: Record<string, ClusterWorker | undefined>;
  schedulingPolicy?: number;
}

/** Whether an internal cluster message is a worker's answer to a hand-off. */
export function isHandOffAnswer(m: unknown): m is { accepted: boolean } {
  if (typeof m !== 'object' || m === null) return false;
  const o = m as Record<string, unknown>;
  return o.cmd === 'NODE_CLUSTER' && typeof o.ack === 'number' && typeof o.accepted === 'boolean';
}

export class PrimarySampler {
  private readonly eld = new LoopDelay();
  /** A full reading every sample (the primary samples rarely), surviving a failed RSS read. */
  private readonly memory = new MemoryReader(1);
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private cpu: NodeJS.CpuUsage = process.cpuUsage();
  private last = performance.now();
  private lastOwn = ownTime.ms;
  private handedOff = new Map<number, number>();
  private refused = 0;
  private readonly watched = new WeakSet<object>();
  private forkSite: CallStack | undefined;

  constructor(
    private readonly cluster: ClusterLike,
    forkSite: CallStack | undefined,
    private readonly intervalMs: number,
  ) {
    if (forkSite !== undefined && forkSite.length > 0) this.forkSite = forkSite;
  }

  start(): void {
    this.eld.start();
    threadState.agentBusy++;
    try {
      for (const w of Object.values(this.cluster.workers ?? {})) if (w !== undefined) this.watch(w);
      listen(this.cluster, 'fork', (w: ClusterWorker) => this.watch(w));
    } finally {
      threadState.agentBusy--;
    }
  }

  private watch(worker: ClusterWorker): void {
    const proc = worker.process;
    if (proc === undefined || typeof proc.on !== 'function' || this.watched.has(proc)) return;
    this.watched.add(proc);
    listen(proc, 'internalMessage', (m: unknown) => {
      try {
        if (!isHandOffAnswer(m)) return;
        if (m.accepted) this.handedOff.set(worker.id, (this.handedOff.get(worker.id) ?? 0) + 1);
        else this.refused++;
      } catch {
        // Counting must never fail into the primary's IPC.
      }
    });
  }

  take(): PrimaryBody {
    const now = performance.now();
    const eluNow = performance.eventLoopUtilization();
    const cpuNow = process.cpuUsage();
    const own = ownTime.ms;
    const mem = this.memory.read();
    const body: PrimaryBody = {
      type: 'primary',
      role: 'cluster-primary',
      intervalMs: Math.round((now - this.last) * 1000) / 1000,
      cpu: { user: cpuNow.user - this.cpu.user, system: cpuNow.system - this.cpu.system },
      agentUs: Math.round((own - this.lastOwn) * 1000),
      elu: Math.round(performance.eventLoopUtilization(eluNow, this.elu).utilization * 10000) / 10000,
      eld: this.eld.take(),
      mem: { rss: mem.rss, heapUsed: mem.heapUsed, heapTotal: mem.heapTotal },
      heldSockets: heldSockets(),
      handedOff: Object.fromEntries([...this.handedOff].map(([id, n]) => [String(id), n])),
      workers: Object.values(this.cluster.workers ?? {}).filter((w) => w !== undefined && w.isDead?.() !== true).length,
    };
    if (this.refused > 0) body.refused = this.refused;
    if (typeof this.cluster.schedulingPolicy === 'number') body.schedulingPolicy = this.cluster.schedulingPolicy;
    if (this.forkSite !== undefined) body.forkSite = this.forkSite;
    this.forkSite = undefined;
    this.handedOff = new Map();
    this.refused = 0;
    this.last = now;
    this.elu = eluNow;
    this.cpu = cpuNow;
    this.lastOwn = own;
    return body;
  }

  stop(): void {
    this.eld.stop();
  }
}

function heldSockets(): number {
  const info = (process as unknown as { getActiveResourcesInfo?: () => string[] }).getActiveResourcesInfo?.() ?? [];
  let n = 0;
  for (const r of info) if (r === HELD_SOCKET_RESOURCE) n++;
  return n;
}
