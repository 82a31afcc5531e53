// Loop yields: requests that hand control back to the event loop over and over (an await of a
// setImmediate per item of their work), so the loop never sleeps, turns through queued
// immediates, and each request needs thousands of its turns. The loop reads as saturated while
// the app's own work is small. Culprit: the app function that yields (the async function
// awaiting the immediates, also through a helper; else the one that queues them). Category event-loop-blocking: the loop is what is
// used up; event-loop-blocking gives way to it (its culprit would be whatever ran most between
// two yields).

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { immediateYields } from './signals/immediate-yields.js';
import { loopStats } from './signals/loop-stats.js';
import { cpuViewOf } from './signals/cpu-view.js';
import { describeCulprit, frameCulprit } from './signals/culprit.js';
import { round } from './signals/stats.js';
import { loopYieldsAdvice } from './loop-yields.advice.js';

export function loopYields(run: RunData): Finding[] {
  const y = immediateYields(run);
  const s = loopStats(run);
  const view = cpuViewOf(run);
  if (!y || !s || !view) return [];
  const frames = view.tree.frames;
  const culprit = frameCulprit(frames[y.yielder], run.cwd);
  const through = y.through !== undefined ? frameCulprit(frames[y.through], run.cwd) : undefined;
  const who = `${describeCulprit(culprit)} queues them${through ? ` through ${describeCulprit(through)}` : ''}`;
  const perRequest = s.requests > 0 ? ` with ${round(s.cpuPerRequestMs, 2)} ms of CPU per request` : '';
  return [
    {
      code: 'HOTPATH_LOOP_YIELDS',
      category: 'event-loop-blocking',
      severity: 'warning',
      title: `${culprit.function} yields to the event loop over and over (setImmediate)`,
      summary:
        `Immediates were queued at ${round(y.queuedShare * 100, 0)} % of the samples (${round(y.queuedMean, 1)} on average, ` +
        `with ${round(y.inFlightMean, 1)} requests in flight): the loop never waited for I/O, it turned from one queued immediate ` +
        `to the next, busy ${round(s.eluMean * 100, 0)} % of the time at ${round(s.requestsPerSecond, 0)} req/s${perRequest}. ` +
        `${who} with setImmediate: every turn of the loop between two of them costs more than a small item of work.`,
      evidence: {
        immediatesQueuedShare: round(y.queuedShare, 3),
        immediatesQueuedMean: round(y.queuedMean, 1),
        inFlightMean: round(y.inFlightMean, 1),
        setImmediateShare: round(y.share, 3),
        eluMean: round(s.eluMean, 3),
        cpuPerRequestMs: round(s.cpuPerRequestMs, 3),
        requestsPerSecond: round(s.requestsPerSecond, 1),
        latencyP50Ms: round(s.latencyP50Ms, 1),
        ...(through ? { through } : {}),
      },
      culprit,
      recommendation: loopYieldsAdvice,
      // The loop never slept: all of its time went to the turns and the little work between them.
      impact: Math.min(1, s.eluMean),
    },
  ];
}
