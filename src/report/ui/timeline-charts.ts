// The timeline's charts as data: which series each chart shows, aligned on one x axis
// (seconds since the run started). Built from the load generator's per-second timeline and
// one agent's telemetry; rendered by timeline-section.ts with uPlot.

import type { PayloadThread, ReportPayload } from '../html/report-payload.js';

export interface SeriesSpec {
  label: string;
  color: string;
  /** 'bars' for per-interval totals (GC pauses), lines otherwise. */
  style?: 'bars' | 'line';
  /** Values formatted with this unit in the legend. */
  unit: string;
}

export interface ChartSpec {
  id: string;
  title: string;
  series: SeriesSpec[];
  /** x first, then one column per series; null where a series has no value at that x. */
  data: (number | null)[][];
}

type Column = (number | null)[];

/** Aligns tables that each have their own x column into one (outer join on x). */
export function joinTables(tables: { x: number[]; ys: Column[] }[]): Column[] {
  const xs = [...new Set(tables.flatMap((t) => t.x))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const out: Column[] = [xs];
  for (const t of tables) {
    for (const y of t.ys) {
      const col: Column = new Array<number | null>(xs.length).fill(null);
      t.x.forEach((x, i) => {
        col[at.get(x) ?? 0] = y[i] ?? null;
      });
      out.push(col);
    }
  }
  return out;
}

const C = {
  blue: '#2f6fdf',
  red: '#d9453b',
  orange: '#e8891c',
  green: '#2e9d5b',
  violet: '#7b52c7',
  grey: '#7d8590',
  teal: '#1f9bab',
  pink: '#d04f93',
};

/** x of the load generator's per-second points: `second` counts from 1 and marks the end of its slot. */
function loadX(p: ReportPayload): number[] {
  if (!p.load) return [];
  const start = (p.load.start - p.run.startedAt) / 1000;
  return p.load.timeline.map((pt) => Math.round((start + pt.second) * 1000) / 1000);
}

export function buildCharts(p: ReportPayload, thread: PayloadThread | undefined): ChartSpec[] {
  const lx = loadX(p);
  const tl = p.load?.timeline ?? [];
  const tx = thread?.t ?? [];
  const charts: ChartSpec[] = [];
  const add = (id: string, title: string, series: SeriesSpec[], tables: { x: number[]; ys: Column[] }[]): void => {
    const used = tables.filter((t) => t.x.length > 0);
    if (used.length === 0) return;
    const keep = series.filter((_, i) => seriesTable(tables, i).x.length > 0);
    charts.push({ id, title, series: keep, data: joinTables(used) });
  };
  add(
    'rps',
    'Requests per second',
    [
      { label: 'load: completed/s', color: C.blue, unit: 'req/s' },
      { label: 'load: errors/s', color: C.red, unit: 'err/s' },
      { label: 'server: finished/s', color: C.teal, unit: 'req/s' },
    ],
    [
      { x: lx, ys: [tl.map((t) => t.requests), tl.map((t) => t.errors)] },
      { x: tx, ys: [thread?.httpRps ?? []] },
    ],
  );
  add(
    'latency',
    'Latency (ms)',
    [
      { label: 'load p50', color: C.blue, unit: 'ms' },
      { label: 'load p99', color: C.red, unit: 'ms' },
      { label: 'server p99', color: C.teal, unit: 'ms' },
    ],
    [
      { x: lx, ys: [tl.map((t) => t.p50), tl.map((t) => t.p99)] },
      { x: tx, ys: [thread?.httpP99 ?? []] },
    ],
  );
  if (!thread) return charts;
  const x = thread.t;
  add(
    'eld',
    'Event-loop delay (ms); stalls shaded red',
    [
      { label: 'p50', color: C.blue, unit: 'ms' },
      { label: 'p99', color: C.orange, unit: 'ms' },
      { label: 'max', color: C.red, unit: 'ms' },
    ],
    [{ x, ys: [thread.eldP50, thread.eldP99, thread.eldMax] }],
  );
  add(
    'elu',
    'Event-loop utilization and CPU (%)',
    [
      { label: 'ELU', color: C.violet, unit: '%' },
      { label: 'CPU (process, % of one core)', color: C.green, unit: '%' },
    ],
    [{ x, ys: [thread.elu, thread.cpu] }],
  );
  add(
    'memory',
    'Memory (MB)',
    [
      { label: 'RSS', color: C.grey, unit: 'MB' },
      { label: 'heap used', color: C.blue, unit: 'MB' },
      { label: 'heap total', color: C.teal, unit: 'MB' },
      { label: 'external', color: C.orange, unit: 'MB' },
    ],
    [{ x, ys: [thread.rss, thread.heapUsed, thread.heapTotal, thread.external] }],
  );
  const gc = gcPerInterval(thread);
  const seen =
    thread.gcCoverage !== undefined && thread.gcCoverage < 0.99
      ? `GC pauses seen (ms per interval; GCs are observed in windows, ${Math.round(thread.gcCoverage * 100)} % of the time)`
      : 'GC pauses (ms per interval)';
  add(
    'gc',
    seen,
    [
      { label: 'minor', color: C.pink, unit: 'ms', style: 'bars' },
      { label: 'major and other', color: C.red, unit: 'ms', style: 'bars' },
    ],
    [{ x, ys: [gc.minor, gc.other] }],
  );
  const types = Object.keys(thread.resourcesByType);
  const palette = [C.blue, C.orange, C.green, C.violet, C.pink];
  add(
    'resources',
    'Active resources and connections',
    [
      { label: 'all resources', color: C.grey, unit: '' },
      ...types.map((t, i) => ({ label: t, color: palette[i % palette.length], unit: '' })),
      { label: 'open connections', color: C.red, unit: '' },
    ],
    [{ x, ys: [thread.resources, ...types.map((t) => thread.resourcesByType[t]), thread.openConnections] }],
  );
  return charts;
}

/** The table that holds series i (series are numbered across tables in order). */
function seriesTable(tables: { x: number[]; ys: Column[] }[], i: number): { x: number[]; ys: Column[] } {
  let k = i;
  for (const t of tables) {
    if (k < t.ys.length) return t;
    k -= t.ys.length;
  }
  return { x: [], ys: [] };
}

/** GC pause time summed into the telemetry intervals the pauses fall in. */
export function gcPerInterval(thread: PayloadThread): { minor: number[]; other: number[] } {
  const n = thread.t.length;
  const minor = new Array<number>(n).fill(0);
  const other = new Array<number>(n).fill(0);
  let k = 0;
  const order = thread.gc.t.map((_, i) => i).sort((a, b) => thread.gc.t[a] - thread.gc.t[b]);
  for (const i of order) {
    while (k < n - 1 && thread.t[k] < thread.gc.t[i]) k++;
    if (n === 0) break;
    (thread.gc.kind[i] === 'minor' ? minor : other)[k] += thread.gc.ms[i];
  }
  return { minor: minor.map(round3), other: other.map(round3) };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
