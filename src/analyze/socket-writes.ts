// Socket writes: the native socket write path (node's StreamBase writes, libuv, the kernel's
// send system calls and on loopback the delivery to the peer) as a share of the CPU, with the
// app function whose writes pay for it. Only native stacks show it (`hotpath run --native`,
// `hotpath import`): the inspector's profile stops at the write binding (writev,
// writeUtf8String), one opaque native frame. Its usual cause is many small writes per response:
// each chunk is converted and queued on its own, and an uncorked write is one system call.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { appFunctions, cpuViewOf, type CpuView } from './signals/cpu-view.js';
import { loopStats } from './signals/loop-stats.js';
import { describeCulprit, frameCulprit } from './signals/culprit.js';
import { round } from './signals/stats.js';
import { nodeWork } from '../profile/work-breakdown.js';
import { SOCKET_WRITE_PATH } from '../profile/work-kind.js';
import { idleForWantOfRequests } from './event-loop-blocking.js';
import { socketWritesAdvice } from './socket-writes.advice.js';

/** The socket write path as a share of non-idle CPU worth reporting: a fifth of the server's time. */
export const SOCKET_WRITES_MIN_SHARE = 0.2;
/** Two fifths is critical: the server spends more in the kernel sending than most apps spend on everything else. */
export const SOCKET_WRITES_CRITICAL_SHARE = 0.4;
/** Below this loop utilization CPU does not limit throughput yet: the cost is reported as info. */
export const SOCKET_WRITES_MIN_ELU = 0.5;
/** App functions examined for their socket writes (the hottest ones). */
const CANDIDATES = 30;

/** µs of the view's self time in the native socket write path. */
export function kernelWriteUs(view: CpuView): number {
  const work = nodeWork(view.tree);
  let us = 0;
  for (let i = 1; i < view.tree.frame.length; i++) if (work[i].label === SOCKET_WRITE_PATH) us += view.tree.self[i];
  return us;
}

export function socketWrites(run: RunData): Finding[] {
  const view = cpuViewOf(run);
  const s = loopStats(run);
  if (!view || !s) return [];
  const busy = s.eluMean >= SOCKET_WRITES_MIN_ELU || idleForWantOfRequests(s, run);
  const writeUs = kernelWriteUs(view);
  const share = writeUs / view.activeUs;
  if (share < SOCKET_WRITES_MIN_SHARE) return [];
  const caller = topWriter(view);
  const culprit = caller ? frameCulprit(caller.frame, run.cwd) : undefined;
  const bytesPerResponse = run.load && run.load.requests.total > 0 ? run.load.throughput.bytesRead / run.load.requests.total : undefined;
  return [
    {
      code: 'HOTPATH_SOCKET_WRITES',
      category: 'socket-writes',
      severity: !busy ? 'info' : share >= SOCKET_WRITES_CRITICAL_SHARE ? 'critical' : 'warning',
      title: 'Writing to sockets takes a large share of the CPU',
      summary:
        `The native socket write path (node's C++ per chunk, libuv, the kernel's send calls) took ${round(share * 100, 0)} % of the CPU time while the loop was busy ${round(s.eluMean * 100, 0)} %` +
        (bytesPerResponse !== undefined ? `, for responses of ${round(bytesPerResponse / 1024, 1)} KB` : '') +
        '.' +
        (culprit && caller
          ? ` Most of it is paid by the writes of ${describeCulprit(culprit)} (${round((caller.us / writeUs) * 100, 0)} % of that time): many small writes per response.`
          : '') +
        (busy ? '' : ' The loop was not busy enough for this to limit throughput yet; it is CPU every request pays.'),
      evidence: {
        writePathShare: round(share, 3),
        writePathMs: round(writeUs / 1000, 1),
        eluMean: round(s.eluMean, 3),
        ...(caller ? { callerWriteShare: round(caller.us / writeUs, 3) } : {}),
        ...(bytesPerResponse !== undefined ? { bytesPerResponse: Math.round(bytesPerResponse) } : {}),
      },
      ...(culprit ? { culprit } : {}),
      recommendation: socketWritesAdvice,
      impact: Math.min(1, share * s.eluMean) * (busy ? 1 : 0.5),
    },
  ];
}

function topWriter(view: CpuView): { frame: CpuView['functions'][number]['frame']; us: number } | undefined {
  let best: { frame: CpuView['functions'][number]['frame']; us: number } | undefined;
  for (const f of appFunctions(view).slice(0, CANDIDATES)) {
    const us = view
      .workOf(f.frameIndex)
      .filter((i) => i.label === SOCKET_WRITE_PATH)
      .reduce((a, i) => a + i.us, 0);
    if (us > (best?.us ?? 0)) best = { frame: f.frame, us };
  }
  return best;
}
