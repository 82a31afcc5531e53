// The few lines `hotpath run` and `hotpath report` print on stderr at the end: how the run
// ended, the load figures, the diagnosis (report/terminal-summary.ts: findings with culprit,
// evidence and fix, then the hotspot table), and always the run directory. Plain text; colour only through the styler (off when piped).

import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Report } from '../report/report-schema.js';
import { formatDiagnosis, type TerminalStyler } from '../report/terminal-summary.js';
import type { RunMeta } from '../run-dir/schema.js';
import { clusterLine } from '../report/cluster-summary.js';

export type Styler = TerminalStyler;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (n: number) => `${fmt(n, n < 10 ? 2 : n < 100 ? 1 : 0)} ms`;

export function outcomeLine(outcome: RunMeta['outcome'], s: Styler): string {
  switch (outcome.status) {
    case 'completed':
      return s.green('run completed');
    case 'interrupted':
      return s.yellow(outcome.reason ?? 'interrupted');
    default:
      return s.red(outcome.reason ?? outcome.status);
  }
}

function loadLine(report: Report): string | undefined {
  const l = report.load;
  if (!l) return undefined;
  const errors = l.errors.total > 0 ? `, ${fmt(l.errors.total)} errors` : ', no errors';
  const non2xx = Object.entries(l.statusCodes)
    .filter(([c]) => !c.startsWith('2'))
    .reduce((n, [, v]) => n + v, 0);
  // Latency of no response at all would read as 0 ms: say what happened instead.
  if (l.requests.total === 0)
    return `no request got a response in ${fmt(l.durationMs / 1000, 1)} s (${fmt(l.options.connections)} connections)${errors}`;
  return (
    `${fmt(l.requests.perSecond)} req/s over ${fmt(l.durationMs / 1000, 1)} s (${fmt(l.options.connections)} connections): ` +
    `p50 ${ms(l.latency.p50)}, p99 ${ms(l.latency.p99)}, max ${ms(l.latency.max)}${errors}${non2xx > 0 ? `, ${fmt(non2xx)} non-2xx` : ''}`
  );
}

/** The summary of a finished run; `cwd` shortens the run directory's path. */
export function formatRunSummary(report: Report, cwd: string, s: Styler, warnings: readonly string[] = []): string {
  const out = [s.bold('hotpath ') + outcomeLine(report.target.outcome, s)];
  const load = loadLine(report);
  if (load) out.push(`  load      ${load}`);
  const t = report.telemetry;
  if (t?.eventLoop)
    out.push(
      `  loop      delay p99 ${ms(t.eventLoop.delayP99Ms)}, max ${ms(t.eventLoop.delayMaxMs)}, utilization ${fmt(t.eventLoop.utilizationMean * 100)}%`,
    );
  if (t?.cluster) out.push(`  cluster   ${clusterLine(t.cluster)}`);
  for (const line of report.target.outcome.stderrTail?.slice(-5) ?? []) out.push(s.dim(`  │ ${line}`));
  const diagnosis = formatDiagnosis(report, s);
  if (diagnosis !== '') out.push('', diagnosis.trimEnd());
  if (warnings.length > 0) out.push('', ...warnings.map((w) => `${s.yellow('warning')} ${w}`));
  const html = join(report.runDir, 'report.html');
  out.push('');
  if (existsSync(html)) out.push(`report: ${displayPath(html, cwd)}`);
  out.push(`run directory: ${displayPath(report.runDir, cwd)}`);
  return out.join('\n') + '\n';
}

export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') ? rel : path;
}
