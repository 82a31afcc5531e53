// Event loop stuck: a target thread's loop stopped turning and never came back before the run
// ended (an endless loop right after listening, a cache warm-up that never finishes). Nothing
// can be measured then: no request is answered and the agent's own timers never run, so the
// loop figures, the CPU profile's hotspots (node's timer dispatch, if anything) and the load
// result all say "nothing". The stall watchdog saw the block from its worker thread and
// sampled its stack, which names the code that holds the loop.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { stuckStalls, type StuckStall } from './signals/stall-causes.js';
import { loadWindow } from './signals/load-window.js';
import { describeCulprit, relativeFile, siteCulprit } from './signals/culprit.js';
import { round } from './signals/stats.js';
import { loopStuckAdvice } from './event-loop-stuck.advice.js';
import type { CallSite } from '../agent/protocol.js';

/** Frames of the blocking stack listed in the evidence. */
const STACK_FRAMES = 8;

export function eventLoopStuck(run: RunData): Finding[] {
  const stuck = stuckStalls(run);
  if (stuck.length === 0) return [];
  const w = loadWindow(run);
  return stuck.map((s) => finding(run, s, w?.start));
}

function finding(run: RunData, s: StuckStall, loadStart: number | undefined): Finding {
  const { thread, stall } = s;
  const culprit = s.site ? siteCulprit(s.site, run.cwd) : undefined;
  const listenedAt = thread.listens[0]?.t;
  const sinceListen = listenedAt !== undefined ? stall.start - listenedAt : undefined;
  const when =
    loadStart !== undefined && stall.start < loadStart
      ? `${seconds(loadStart - stall.start)} before the load began`
      : loadStart !== undefined
        ? `${seconds(stall.start - loadStart)} into the load`
        : 'during the run';
  const after =
    sinceListen === undefined || sinceListen < 0
      ? ''
      : sinceListen < 100
        ? ', right after it started listening'
        : `, ${seconds(sinceListen)} after it started listening`;
  const who = `pid ${thread.pid}${thread.threadId !== 0 ? ` (thread ${thread.threadId})` : ''}`;
  const stack = (s.stack ?? []).slice(0, STACK_FRAMES).map((f) => frameText(f, run.cwd));
  const blame = culprit
    ? ` The blocking stack: ${describeCulprit(culprit)}${s.hotLine !== undefined ? `, busy at line ${s.hotLine}` : ''}${stack.length > 1 ? `, called from ${stack.slice(1, 4).join(' ← ')}` : ''}${s.share !== undefined ? ` (${Math.round(s.share * 100)} % of the samples)` : ''}.`
    : stack.length > 0
      ? ` No app code was on the blocking stack: ${stack.slice(0, 4).join(' ← ')}.`
      : ' Its stack could not be sampled (blocked in native code, or an agent without stall sampling).';
  return buildFinding({
    code: 'HOTPATH_EVENT_LOOP_STUCK',
    category: 'event-loop-blocking',
    severity: 'critical',
    title: culprit ? `The event loop never came back: ${culprit.function} never returned` : undefined,
    summary:
      `The event loop of ${who} stopped ${when}${after}, and was still blocked ${seconds(stall.durationMs)} later when the run ended: ` +
      `from then on no request could be answered and nothing else was measured.${blame}`,
    evidence: {
      pid: thread.pid,
      threadId: thread.threadId,
      stalledFrom: stall.start,
      stalledMs: round(stall.durationMs),
      ...(sinceListen !== undefined && sinceListen >= 0 ? { afterListenMs: round(sinceListen) } : {}),
      ...(culprit && s.hotLine !== undefined ? { hotLine: `${culprit.file}:${s.hotLine}` } : {}),
      ...(s.share !== undefined ? { stackShare: s.share } : {}),
      ...(stack.length > 0 ? { stack } : {}),
      loopReturned: false,
    },
    culprit,
    recommendation: loopStuckAdvice,
    impact: 1,
  });
}

function frameText(f: CallSite, cwd: string): string {
  const file = f.file.startsWith('node:') ? f.file : relativeFile(f.file, cwd);
  return `${f.function || '(anonymous)'} ${file}:${f.line}`;
}

function seconds(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}
