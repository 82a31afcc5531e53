// The one-line summary of a time window picked on the timeline.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { windowSummary } from '../../../src/report/ui/window-summary.js';
import type { PayloadThread, ReportPayload } from '../../../src/report/html/report-payload.js';

const thread = {
  t: [1, 2, 3, 4],
  eldMax: [5, 80, 7, 9],
  elu: [50, 100, 90, 10],
  cpu: [40, 100, 80, 5],
  gc: { t: [1.5, 2.5, 3.5], ms: [2, 3, 40], kind: ['minor', 'minor', 'major'] },
  stalls: { t: [2.2], ms: [300] },
} as unknown as PayloadThread;

const payload = {
  run: { startedAt: 10_000 },
  load: {
    start: 11_000,
    timeline: [
      { second: 1, requests: 100, errors: 0, p99: 10 },
      { second: 2, requests: 80, errors: 2, p99: 25 },
      { second: 3, requests: 90, errors: 0, p99: 12 },
    ],
  },
} as unknown as ReportPayload;

describe('windowSummary', () => {
  it('sums requests, takes the worst figures and counts GC pauses and stalls inside the window', () => {
    // Load seconds end at 2, 3, 4 s since the run started; the window 1.8–3.2 s holds two of them.
    assert.equal(
      windowSummary(payload, thread, { from: 1.8, to: 3.2 }),
      'Window 1.80–3.20 s: 180 requests, 2 errors, worst per-second p99 25.0 ms, event-loop delay max 80.0 ms, ' +
        'utilization 95%, CPU 90% of a core, GC 3.0 ms in 1 pauses, 1 stall.',
    );
  });

  it('says when nothing was recorded in the window', () => {
    assert.equal(
      windowSummary({ run: { startedAt: 0 }, load: null } as unknown as ReportPayload, undefined, { from: 0, to: 1 }),
      'Window 0.00–1.00 s: no telemetry in it.',
    );
  });
});
