// A uPlot plugin that shades the run's phases (setup, warm-up, cool-down), marks main-thread
// stalls in red and shows the selected time window, behind the series of every chart.

import type uPlot from 'uplot';
import type { PayloadThread, ReportPayload } from '../html/report-payload.js';
import type { TimeWindow } from './app-state.js';

const PHASE_FILL: Record<string, string> = {
  starting: 'rgba(125,133,144,0.10)',
  setup: 'rgba(125,133,144,0.10)',
  warmup: 'rgba(232,137,28,0.12)',
  cooldown: 'rgba(47,111,223,0.08)',
  stopping: 'rgba(125,133,144,0.10)',
};
const STALL_FILL = 'rgba(217,69,59,0.25)';
const WINDOW_FILL = 'rgba(123,82,199,0.16)';

export function bandsPlugin(p: ReportPayload, thread: () => PayloadThread | undefined, win: () => TimeWindow | null): uPlot.Plugin {
  return {
    hooks: {
      drawClear: [
        (u) => {
          for (const ph of p.phases) {
            const fill = PHASE_FILL[ph.phase];
            if (fill) band(u, ph.start, ph.end, fill);
          }
          const t = thread();
          if (t) t.stalls.t.forEach((s, i) => band(u, s, s + t.stalls.ms[i] / 1000, STALL_FILL, 2));
          const w = win();
          if (w) band(u, w.from, w.to, WINDOW_FILL);
        },
      ],
    },
  };
}

/** Fills [from, to] (x values) over the plotting area's full height; at least minPx wide. */
function band(u: uPlot, from: number, to: number, fill: string, minPx = 0): void {
  const dpr = window.devicePixelRatio || 1;
  const x0 = u.valToPos(from, 'x', true);
  const x1 = u.valToPos(to, 'x', true);
  const left = Math.max(u.bbox.left, Math.min(x0, x1));
  const right = Math.min(u.bbox.left + u.bbox.width, Math.max(x0, x1, x0 + minPx * dpr));
  if (right <= left) return;
  u.ctx.save();
  u.ctx.fillStyle = fill;
  u.ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
  u.ctx.restore();
}
