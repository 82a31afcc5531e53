// The load section: the latency distribution as a percentile plot (corrected latency and
// service time in open-model runs), throughput, status codes, errors, how well an
// open-model schedule was kept, and the generator's own warnings.

import uPlot from 'uplot';
import { h, section, table, type Child } from './dom.js';
import { bytes, ms, num, pct } from './format.js';
import type { LatencyStats, LoadResult } from '../../load/load-result.js';

/** Percentiles plotted, as [label, key, x = -log10(1 - p)]; max is drawn one decade past p99.99. */
const POINTS: [string, keyof LatencyStats, number][] = [
  ['p50', 'p50', Math.log10(2)],
  ['p75', 'p75', Math.log10(4)],
  ['p90', 'p90', 1],
  ['p97.5', 'p97_5', Math.log10(40)],
  ['p99', 'p99', 2],
  ['p99.9', 'p999', 3],
  ['p99.99', 'p9999', 4],
  ['max', 'max', 5],
];

export function loadSection(load: LoadResult | null): { element: HTMLElement; render(): void } {
  if (!load) {
    const element = section('load', 'Load', h('p', { class: 'muted' }, 'No load was driven in this run.'));
    return { element, render: () => undefined };
  }
  const plot = h('div', { class: 'chart percentile-plot' });
  const element = section('load', 'Load', figures(load), plot, details(load));
  return { element, render: () => percentilePlot(plot, load) };
}

function figures(l: LoadResult): HTMLElement {
  const model =
    l.model === 'open' ? `open model, ${num(l.options.rate ?? 0)} req/s intended` : `closed model, ${l.options.connections} connections`;
  return h(
    'div',
    { class: 'figures' },
    figure('throughput', `${num(l.requests.perSecond)} req/s`),
    figure('latency p50', ms(l.latency.p50)),
    figure('latency p99', ms(l.latency.p99)),
    figure('requests', num(l.requests.total)),
    figure('errors', num(l.errors.total)),
    figure('read', `${bytes(l.throughput.bytesReadPerSecond)}/s`),
    h('div', { class: 'muted model' }, `${model}; ${(l.durationMs / 1000).toFixed(1)} s measured against `, h('code', null, l.url)),
  );
}

function figure(label: string, value: string): HTMLElement {
  return h('div', { class: 'figure' }, h('div', { class: 'figure-value' }, value), h('div', { class: 'figure-label' }, label));
}

function percentilePlot(holder: HTMLElement, l: LoadResult): void {
  const xs = POINTS.map((p) => p[2]);
  const series: uPlot.Series[] = [{ label: 'percentile', value: (_u, v) => label(v) }];
  const data: number[][] = [xs];
  const add = (name: string, s: LatencyStats, color: string): void => {
    series.push({ label: name, stroke: color, width: 2, points: { show: true, size: 5 }, value: (_u, v) => (v == null ? '–' : ms(v)) });
    data.push(POINTS.map((p) => s[p[1]]));
  };
  add(l.serviceTime ? 'latency (corrected, from intended send)' : 'latency', l.latency, '#d9453b');
  if (l.serviceTime) add('service time (from actual write)', l.serviceTime, '#2f6fdf');
  holder.appendChild(h('div', { class: 'chart-title' }, 'Latency by percentile (ms, log x)'));
  new uPlot(
    {
      width: Math.max(300, holder.clientWidth || 900),
      height: 220,
      scales: { x: { time: false, range: [0, 5.2] }, y: { range: (_u, _min, max) => [0, max * 1.08 || 1] } },
      axes: [
        { splits: () => xs, values: (_u, v) => v.map(label), size: 30 },
        { size: 56, values: (_u, v) => v.map((x) => ms(x)) },
      ],
      cursor: { drag: { x: false, y: false } },
      series,
    },
    data as uPlot.AlignedData,
    holder,
  );
}

function label(x: number | null): string {
  const p = POINTS.find((q) => x !== null && Math.abs(q[2] - x) < 1e-6);
  return p ? p[0] : '';
}

function details(l: LoadResult): HTMLElement {
  const statuses = Object.entries(l.statusCodes).sort((a, b) => b[1] - a[1]);
  const errors = Object.entries(l.errors.byCode);
  const parts: Child[] = [
    h('div', null, h('h3', null, 'Latency'), latencyTable(l)),
    h(
      'div',
      null,
      h('h3', null, 'Status codes'),
      statuses.length
        ? table(
            ['status', 'count', 'share'],
            statuses.map(([c, n]) => [c, num(n), pct(n / Math.max(1, l.requests.total))]),
          )
        : h('p', { class: 'muted' }, 'No responses.'),
    ),
    h(
      'div',
      null,
      h('h3', null, 'Errors'),
      table(
        ['kind', 'count'],
        [
          ['timeouts', num(l.errors.timeouts)],
          ['malformed responses', num(l.errors.parse)],
          ...errors.map(([c, n]) => [c, num(n)]),
          ['connections opened', num(l.connections.opened)],
          ['closed by server', num(l.connections.closedByServer)],
        ],
      ),
    ),
  ];
  if (l.schedule) {
    const s = l.schedule;
    parts.push(
      h(
        'div',
        null,
        h('h3', null, 'Schedule (open model)'),
        table(
          ['', ''],
          [
            ['sends intended', num(s.intended)],
            ['late sends', `${num(s.late)} (${pct(s.late / Math.max(1, s.intended))})`],
            ['dropped sends', num(s.dropped)],
            ['worst lateness', ms(s.maxLagMs)],
          ],
        ),
      ),
    );
  }
  parts.push(generator(l));
  return h('div', { class: 'load-details' }, ...parts);
}

function latencyTable(l: LoadResult): HTMLTableElement {
  const cols = l.serviceTime ? ['', 'corrected', 'service time'] : ['', 'latency'];
  const keys: [string, keyof LatencyStats][] = [
    ['min', 'min'],
    ['mean', 'mean'],
    ['p50', 'p50'],
    ['p90', 'p90'],
    ['p99', 'p99'],
    ['p99.9', 'p999'],
    ['max', 'max'],
  ];
  return table(
    cols,
    keys.map(([name, k]) => [name, ms(l.latency[k]), ...(l.serviceTime ? [ms(l.serviceTime[k])] : [])]),
  );
}

function generator(l: LoadResult): HTMLElement {
  const g = l.generator;
  const items: Child[] = [
    h(
      'li',
      null,
      `CPU ${ms(g.cpuUserMs + g.cpuSystemMs)} over ${g.workers.length} worker(s); busiest worker's event-loop utilization ${pct(g.maxElu)}`,
    ),
    g.saturated
      ? h('li', { class: 'warn' }, 'The load generator, not the server, limited this measurement: figures understate the server.')
      : null,
    ...g.warnings.map((w) => h('li', { class: 'warn' }, w)),
  ];
  return h('div', null, h('h3', null, 'Load generator'), h('ul', null, ...items));
}
