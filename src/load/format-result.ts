// The results table `hotpath load` prints on stderr: latency percentiles (corrected and
// service time side by side in the open model), rates, status codes, errors, schedule
// keeping and the generator's own cost and warnings.

import type { LatencyStats, LoadResult } from './load-result.js';

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
}

const plain: Style = { bold: (s) => s, dim: (s) => s, red: (s) => s, yellow: (s) => s };

const ROWS: [string, keyof LatencyStats][] = [
  ['p50', 'p50'],
  ['p75', 'p75'],
  ['p90', 'p90'],
  ['p97.5', 'p97_5'],
  ['p99', 'p99'],
  ['p99.9', 'p999'],
  ['p99.99', 'p9999'],
  ['max', 'max'],
  ['mean', 'mean'],
  ['stdev', 'stdev'],
];

export function formatMs(ms: number): string {
  return `${ms.toFixed(3)} ms`;
}

export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => '  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n');
}

function latencyTable(r: LoadResult): string {
  const open = r.serviceTime !== undefined;
  const head = open ? ['', 'latency (from planned send)', 'service time (from write)'] : ['', 'latency'];
  const rows = ROWS.map(([label, key]) => {
    const row = [label, formatMs(r.latency[key])];
    if (open) row.push(formatMs((r.serviceTime as LatencyStats)[key]));
    return row;
  });
  return table([head, ...rows]);
}

export function formatResult(r: LoadResult, style: Style = plain): string {
  const secs = (r.durationMs / 1000).toFixed(2);
  const lines: string[] = [];
  const what =
    r.model === 'open'
      ? `open model at ${formatCount(r.options.rate ?? 0)} req/s`
      : `closed model, ${r.options.connections} connections × ${r.options.pipelining}`;
  lines.push(style.bold(`${r.options.method} ${r.url}`) + style.dim(`  ${what}, ${r.options.workers} worker(s), ${secs} s measured`));
  lines.push('', latencyTable(r), '');
  lines.push(
    `  requests    ${formatCount(r.requests.total)} completed, ${formatCount(r.requests.perSecond)} req/s` +
      style.dim(`  (${formatCount(r.requests.sent)} sent, ${formatCount(r.requests.inFlightAtEnd)} in flight at the end)`),
  );
  lines.push(
    `  bytes       ${formatBytes(r.throughput.bytesRead)} read (${formatBytes(r.throughput.bytesReadPerSecond)}/s), ${formatBytes(r.throughput.bytesWritten)} written`,
  );
  const codes = Object.entries(r.statusCodes).map(([c, n]) => {
    const text = `${c}: ${formatCount(n)}`;
    return Number(c) >= 500 ? style.red(text) : Number(c) >= 400 ? style.yellow(text) : text;
  });
  lines.push(`  status      ${codes.length ? codes.join(', ') : 'none'}`);
  lines.push(`  errors      ${errorLine(r, style)}`);
  lines.push(
    `  connections ${formatCount(r.connections.opened)} opened, ${formatCount(r.connections.closedByServer)} closed by the server`,
  );
  if (r.schedule) {
    const s = r.schedule;
    lines.push(
      `  schedule    ${formatCount(s.intended)} planned, ${formatCount(s.late)} late (worst ${formatMs(s.maxLagMs)}), ${formatCount(s.dropped)} never sent`,
    );
  }
  const g = r.generator;
  const perReq = g.cpuPerRequestUs === undefined ? '' : `, ${g.cpuPerRequestUs.toFixed(1)} µs per request`;
  lines.push(
    `  generator   CPU ${formatCount(g.cpuUserMs)} ms user + ${formatCount(g.cpuSystemMs)} ms system${perReq}, busiest worker ${Math.round(g.maxElu * 100)}% busy`,
  );
  if (g.workers.length > 1 || g.workers.some((w) => w.cpuUserMs !== undefined)) {
    lines.push(`  workers     ${g.workers.map(workerCell).join(', ')}`);
  }
  for (const w of g.warnings) lines.push('', style.yellow(`  warning: ${w}`));
  return lines.join('\n') + '\n';
}

function workerCell(w: LoadResult['generator']['workers'][number]): string {
  const cpu = w.cpuUserMs === undefined ? '' : ` (CPU ${formatCount(w.cpuUserMs + (w.cpuSystemMs ?? 0))} ms)`;
  return `#${w.worker} ${w.connections} conns ${Math.round(w.elu * 100)}% busy${cpu}`;
}

function errorLine(r: LoadResult, style: Style): string {
  const e = r.errors;
  if (e.total === 0) return 'none';
  const parts = [`${formatCount(e.total)} total`];
  if (e.timeouts) parts.push(`${formatCount(e.timeouts)} timeouts`);
  if (e.parse) parts.push(`${formatCount(e.parse)} malformed responses`);
  for (const [code, n] of Object.entries(e.byCode)) parts.push(`${code}: ${formatCount(n)}`);
  return style.red(parts.join(', '));
}

/** One-line live progress for an interactive terminal. */
export function formatProgress(
  p: { second: number; requests: number; errors: number; p99: number; totalRequests: number },
  planned: { seconds: number } | { amount: number },
): string {
  const done = 'seconds' in planned ? p.second / planned.seconds : p.totalRequests / planned.amount;
  const bar = `[${'#'.repeat(Math.max(0, Math.min(20, Math.round(done * 20)))).padEnd(20)}] `;
  return `${bar}${p.second}s  ${formatCount(p.requests)} req/s  p99 ${formatMs(p.p99)}  ${formatCount(p.totalRequests)} done  ${formatCount(p.errors)} errors`;
}
