// What happened in the time window picked on the timeline, in one line: load-generator
// requests and errors, the worst per-second p99, event-loop delay and utilization, CPU,
// GC pauses and stalls of the thread shown. DOM-free (tested under Node).

import type { PayloadThread, ReportPayload } from '../html/report-payload.js';
import type { TimeWindow } from './app-state.js';
import { ms, num, pct } from './format.js';

const inside = (w: TimeWindow, t: number): boolean => t >= w.from && t <= w.to;

function loadPart(p: ReportPayload, w: TimeWindow): string[] {
  if (!p.load) return [];
  const start = (p.load.start - p.run.startedAt) / 1000;
  // A per-second point covers (second - 1, second]: count it when its end is in the window.
  const pts = p.load.timeline.filter((pt) => inside(w, start + pt.second));
  if (pts.length === 0) return [];
  const requests = pts.reduce((a, pt) => a + pt.requests, 0);
  const errors = pts.reduce((a, pt) => a + pt.errors, 0);
  return [
    `${num(requests)} requests${errors ? `, ${num(errors)} errors` : ''}`,
    `worst per-second p99 ${ms(Math.max(...pts.map((pt) => pt.p99)))}`,
  ];
}

function threadPart(t: PayloadThread, w: TimeWindow): string[] {
  const idx = t.t.map((x, i) => (inside(w, x) ? i : -1)).filter((i) => i >= 0);
  const out: string[] = [];
  if (idx.length > 0) {
    const mean = (col: number[]): number => idx.reduce((a, i) => a + col[i], 0) / idx.length;
    out.push(
      `event-loop delay max ${ms(Math.max(...idx.map((i) => t.eldMax[i])))}`,
      `utilization ${pct(mean(t.elu) / 100, 0)}`,
      `CPU ${pct(mean(t.cpu) / 100, 0)} of a core`,
    );
  }
  const gc = t.gc.t.map((x, i) => (inside(w, x) ? t.gc.ms[i] : -1)).filter((x) => x >= 0);
  const seen = t.gcCoverage !== undefined && t.gcCoverage < 0.99 ? ' seen' : '';
  if (gc.length) out.push(`GC ${ms(gc.reduce((a, b) => a + b, 0))} in ${gc.length} pauses${seen}`);
  const stalls = t.stalls.t.filter((x, i) => x <= w.to && x + t.stalls.ms[i] / 1000 >= w.from).length;
  if (stalls) out.push(`${stalls} stall${stalls > 1 ? 's' : ''}`);
  return out;
}

export function windowSummary(p: ReportPayload, thread: PayloadThread | undefined, w: TimeWindow): string {
  const parts = [...loadPart(p, w), ...(thread ? threadPart(thread, w) : [])];
  return `Window ${w.from.toFixed(2)}–${w.to.toFixed(2)} s: ${parts.length ? parts.join(', ') : 'no telemetry in it'}.`;
}
