// The timeline: one uPlot chart per signal, stacked on one shared x axis (seconds since the
// run started) with synced cursors, the run's phases shaded, stalls marked, and a drag
// selection that sets the time window the flame graph shows.

import uPlot from 'uplot';
import { h, replace, section } from './dom.js';
import { timeWindow } from './app-state.js';
import { hookState } from './test-hook.js';
import type { PayloadThread, ReportPayload } from '../html/report-payload.js';
import { buildCharts, type ChartSpec } from './timeline-charts.js';
import { bandsPlugin } from './timeline-bands.js';
import { windowSummary } from './window-summary.js';

const CHART_HEIGHT = 150;
const SYNC_KEY = 'hotpath-timeline';

export class TimelineSection {
  readonly element: HTMLElement;
  private readonly charts = h('div', { class: 'timeline-charts' });
  private readonly summary = h('div', { class: 'window-summary' });
  private plots: uPlot[] = [];
  private thread: PayloadThread | undefined;
  /** A drag on a chart is in progress; its selection so far. */
  private dragging = false;
  private pending: { from: number; to: number } | null = null;

  constructor(private readonly payload: ReportPayload) {
    const threads = payload.threads;
    // The payload lists the thread that served the most requests first.
    this.thread = threads[0];
    const select = h(
      'select',
      { attrs: { 'aria-label': 'Thread' } },
      ...threads.map((t, i) => {
        const o = h('option', null, t.label);
        o.value = String(i);
        o.selected = t === this.thread;
        return o;
      }),
    );
    select.disabled = threads.length < 2;
    select.addEventListener('change', () => {
      this.thread = threads[Number(select.value)];
      this.render();
    });
    const hint = h('span', { class: 'muted' }, 'Drag across a chart to show that window in the flame graph; double-click to clear.');
    this.element = section(
      'timeline',
      'Timeline',
      h('div', { class: 'toolbar' }, select, hint),
      this.legendKey(),
      this.summary,
      this.charts,
    );
    timeWindow.subscribe(() => {
      for (const p of this.plots) p.redraw(false, false);
      this.summarize();
    });
    new ResizeObserver(() => this.resize()).observe(this.charts);
  }

  private legendKey(): HTMLElement {
    const phases = this.payload.phases.filter((p) => p.phase !== 'load').map((p) => p.phase);
    return h(
      'div',
      { class: 'muted phase-key' },
      'Shaded: ',
      ...[...new Set(phases)].map((p) => h('span', { class: `phase-chip phase-${p}` }, p)),
      h('span', { class: 'phase-chip phase-window' }, 'selected window'),
    );
  }

  private summarize(): void {
    const w = timeWindow.value;
    replace(this.summary, w ? windowSummary(this.payload, this.thread, w) : '');
  }

  /** Builds the charts; called once the section is in the document (uPlot measures). */
  render(): void {
    this.summarize();
    for (const p of this.plots) p.destroy();
    this.plots = [];
    const specs = buildCharts(this.payload, this.thread);
    if (specs.length === 0) {
      replace(this.charts, h('p', { class: 'muted' }, 'No telemetry was recorded for this run.'));
      return;
    }
    replace(this.charts);
    for (const spec of specs) this.plots.push(this.plot(spec));
    hookState().timelineCharts = this.plots.length;
  }

  private plot(spec: ChartSpec): uPlot {
    const holder = h('div', { class: 'chart', data: { chart: spec.id } }, h('div', { class: 'chart-title' }, spec.title));
    this.charts.appendChild(holder);
    const bars = uPlot.paths.bars?.({ size: [0.8, 12] });
    const opts: uPlot.Options = {
      width: this.width(),
      height: CHART_HEIGHT,
      scales: { x: { time: false } },
      axes: [{ size: 28, values: (_u, vals) => vals.map((v) => `${v}s`) }, { size: 50 }],
      cursor: { sync: { key: SYNC_KEY }, drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      series: [
        { label: 'time', value: (_u, v) => (v == null ? '–' : `${v.toFixed(1)} s`) },
        ...spec.series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 1.5,
          spanGaps: true,
          ...(s.style === 'bars' && bars ? { paths: bars, fill: s.color + '99' } : {}),
          value: (_u: uPlot, v: number | null) => (v == null ? '–' : `${Math.round(v * 100) / 100} ${s.unit}`),
        })),
      ],
      plugins: [
        bandsPlugin(
          this.payload,
          () => this.thread,
          () => timeWindow.value,
        ),
      ],
      hooks: {
        setSelect: [(u) => this.selected(u)],
      },
    };
    const u = new uPlot(opts, spec.data as uPlot.AlignedData, holder);
    u.over.addEventListener('dblclick', () => timeWindow.set(null));
    u.over.addEventListener('mousedown', () => {
      this.dragging = true;
      // After uPlot's own mouseup handling, which reports the final selection.
      document.addEventListener('mouseup', () => setTimeout(() => this.commit(u)), { once: true });
    });
    return u;
  }

  /**
   * uPlot reports the selection on every mouse move of a drag; the window (and with it the flame
   * graph's rebuild, tens of ms on a large profile) follows once, when the drag ends.
   */
  private selected(u: uPlot): void {
    const { left, width } = u.select;
    this.pending = width < 3 ? null : { from: Math.max(0, u.posToVal(left, 'x')), to: u.posToVal(left + width, 'x') };
    if (!this.dragging) this.commit(u);
  }

  /** The selection becomes the flame graph's time window, and the selection box goes away. */
  private commit(u: uPlot): void {
    this.dragging = false;
    const w = this.pending;
    this.pending = null;
    if (w === null) return;
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    timeWindow.set(w);
  }

  private width(): number {
    return Math.max(300, this.charts.clientWidth || 900);
  }

  private resize(): void {
    const w = this.width();
    for (const p of this.plots) if (p.width !== w) p.setSize({ width: w, height: CHART_HEIGHT });
  }
}
