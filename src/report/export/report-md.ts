// report.md: a short Markdown summary of a Report, fit for a pull-request comment or a CI
// log: the verdict, each finding with its culprit file:line, evidence and fix, the key load
// figures, and the top hotspots. Strings from the target (names, paths, URLs) are escaped so
// they render as text, never as Markdown or HTML.

import type { Finding } from '../../analyze/finding.js';
import type { Report } from '../report-schema.js';
import { alsoFoundText, isAlsoFoundList, showInfinity } from '../../analyze/evidence.js';
import { clusterLine } from '../cluster-summary.js';

/** Escapes text for Markdown (inline and table cells). */
export function mdText(s: string): string {
  return s.replace(/[\\`*_{}[\]()<>#+!|~]/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ');
}

/** A code span that survives backticks inside. */
export function mdCode(s: string): string {
  const clean = s.replace(/\r?\n/g, ' ');
  const fence = clean.includes('`') ? '``' : '`';
  return `${fence}${fence.length > 1 ? ' ' : ''}${clean}${fence.length > 1 ? ' ' : ''}${fence}`;
}

const num = (n: number, digits = 1) =>
  Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: digits });
const pct = (share: number) => `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;

function evidenceValue(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? num(v, 3) : String(v);
  if (typeof v === 'string') return mdText(v.length > 120 ? `${v.slice(0, 117)}...` : showInfinity(v));
  if (typeof v === 'boolean') return String(v);
  if (isAlsoFoundList(v)) return mdText(alsoFoundText(v));
  if (Array.isArray(v) && v.length <= 6 && v.every((x) => typeof x === 'number' || typeof x === 'string')) return mdText(v.join(', '));
  return undefined;
}

function findingSection(f: Finding, i: number): string[] {
  const out = [`### ${i + 1}. ${mdText(f.title)} (${f.severity}, ${f.category})`, '', mdText(f.summary), ''];
  if (f.culprit) {
    const { function: fn, file, line, column } = f.culprit;
    out.push(`**Culprit:** ${mdCode(fn)} at ${mdCode(line > 0 ? `${file}:${line}${column ? `:${column}` : ''}` : file)}`, '');
  }
  const ev = Object.entries(f.evidence)
    .flatMap(([k, v]) => {
      const s = evidenceValue(v);
      return s === undefined ? [] : [`- ${mdText(k)}: ${s}`];
    })
    .slice(0, 10);
  if (ev.length > 0) out.push('**Evidence:**', '', ...ev, '');
  out.push('**Fix:**', '', f.recommendation.trim(), '');
  return out;
}

function verdict(report: Report): string {
  const incomplete = report.findings.find((f) => f.category === 'incomplete');
  const serious = report.findings.filter((f) => f.severity !== 'info' && f.category !== 'healthy' && f.category !== 'incomplete');
  if (incomplete && serious.length === 0) return `**Verdict:** no verdict: ${mdText(lowerFirst(incomplete.title))}.`;
  if (report.target.outcome.status !== 'completed' && report.target.outcome.reason) {
    if (serious.length === 0)
      return `**Verdict:** the run did not complete (${mdText(report.target.outcome.status)}: ${mdText(report.target.outcome.reason)}).`;
  }
  // A load that got no response has only its own finding (off-target-load's, with the errors by code).
  if (report.load?.requests.total === 0 && serious.every((f) => f.category === 'off-target-load'))
    return '**Verdict:** nothing measured: no request got a response.';
  if (serious.length === 0 && !report.findings.some((f) => f.category === 'healthy') && (report.warnings?.length ?? 0) > 0) {
    return `**Verdict:** no problem found, but the diagnosis is incomplete: ${mdText(report.warnings![0])}${report.warnings!.length > 1 ? ` (and ${report.warnings!.length - 1} more warnings)` : ''}.`;
  }
  if (serious.length === 0) return '**Verdict:** healthy: no warning or critical finding.';
  const main = serious[0];
  const where = main.culprit
    ? ` in ${mdCode(main.culprit.function)} (${mdCode(main.culprit.line > 0 ? `${main.culprit.file}:${main.culprit.line}` : main.culprit.file)})`
    : '';
  const partial = incomplete ? ' The diagnosis is incomplete: see its finding below.' : '';
  return `**Verdict:** ${serious.length} problem${serious.length > 1 ? 's' : ''} found. Main: ${mdText(main.title)}${where}.${partial}`;
}

const lowerFirst = (t: string) => t.charAt(0).toLowerCase() + t.slice(1);

/** What the in-process agents failed to do: each one is data the diagnosis lacks. */
function agentErrorSection(report: Report): string[] {
  const errors = report.agentErrors ?? [];
  if (errors.length === 0) return [];
  const rows = errors.map(
    (e) =>
      `| ${mdCode(e.what)} | ${e.pid}${e.threadId > 0 ? ` (thread ${e.threadId})` : ''} | ${e.target ? 'yes' : 'no'} | ${mdText(e.message)} |`,
  );
  return [
    '## Agent errors',
    '',
    "Parts of hotpath's in-process agent that failed (each was disabled; the rest kept running).",
    '',
    '| part | pid | target | error |',
    '|---|---:|---|---|',
    ...rows,
    '',
  ];
}

function loadSection(report: Report): string[] {
  const l = report.load;
  if (!l) return [];
  const row = [
    num(l.requests.perSecond),
    num(l.latency.p50, 2),
    num(l.latency.p99, 2),
    num(l.latency.max, 2),
    num(l.errors.total),
    num(l.requests.total),
    `${num(l.durationMs / 1000, 1)} s`,
  ];
  const out = [
    '## Load',
    '',
    '| req/s | p50 ms | p99 ms | max ms | errors | requests | duration |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    `| ${row.join(' | ')} |`,
    '',
  ];
  if (l.generator.saturated) out.push('> The load generator was saturated: these figures understate the server.', '');
  const cluster = report.telemetry?.cluster;
  if (cluster) out.push(`**Cluster:** ${mdText(clusterLine(cluster))}.`, '');
  return out;
}

function hotspotSection(report: Report, limit: number): string[] {
  if (report.hotspots.length === 0) return [];
  const rows = report.hotspots
    .slice(0, limit)
    .map(
      (h) =>
        `| ${mdText(h.function)} | ${h.file ? mdCode(`${h.file}${h.line ? `:${h.line}` : ''}`) : ''} | ${h.kind} | ${num(h.selfMs)} | ${pct(h.selfShare)} | ${pct(h.totalShare)} |`,
    );
  return [
    '## Hotspots',
    '',
    'Self time after attribution (native, core and dependency work charged to the app code that asked for it).',
    '',
    '| function | file | kind | self ms | self | total |',
    '|---|---|---|---:|---:|---:|',
    ...rows,
    '',
  ];
}

export function renderReportMarkdown(report: Report, options: { hotspots?: number } = {}): string {
  const cmd = report.target.command.join(' ');
  const lines = [
    '# hotpath report',
    '',
    `${mdCode(cmd || report.target.url || 'target')}${report.target.nodeVersion ? ` on Node ${mdText(report.target.nodeVersion)}` : ''}`,
    '',
    verdict(report),
    '',
    ...agentErrorSection(report),
  ];
  const shown = report.findings.filter((f) => f.category !== 'healthy' || report.findings.length === 1);
  if (shown.length > 0) {
    lines.push('## Findings', '');
    shown.forEach((f, i) => lines.push(...findingSection(f, i)));
  }
  lines.push(...loadSection(report), ...hotspotSection(report, options.hotspots ?? 10));
  lines.push(`_hotpath ${mdText(report.hotpathVersion)}, run directory ${mdCode(report.runDir)}_`, '');
  return lines.join('\n');
}
