// The diagnosis as people read it in a terminal (stderr): the top findings with their culprit,
// key evidence figures and the fix, then a hotspot table (attributed self time, app code
// first). Colour only through the styler, so NO_COLOR, CI and pipes get plain text.

import type { Finding } from '../analyze/finding.js';
import { alsoFoundText, isAlsoFoundList, showInfinity } from '../analyze/evidence.js';
import type { Hotspot, Report } from './report-schema.js';
import { pathLines } from './terminal-path.js';

export interface TerminalStyler {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
}

export interface TerminalSummaryOptions {
  /** Findings shown in full (default 3); the rest are listed by title. */
  findings?: number;
  /** Rows of the hotspot table (default 8). */
  hotspots?: number;
  /** Wrap width (default 100). */
  width?: number;
}

/** Evidence fields shown per finding: the first few plain figures, in the analyzer's order. */
const EVIDENCE_FIELDS = 6;

const num = (n: number) =>
  Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: Math.abs(n) < 1 ? 3 : 1 });

export function formatDiagnosis(report: Report, s: TerminalStyler, options: TerminalSummaryOptions = {}): string {
  const width = options.width ?? 100;
  const out: string[] = [];
  const findings = report.findings;
  out.push(...agentErrorBlock(report, s, width));
  const full = findings.slice(0, options.findings ?? 3);
  if (findings.length > 0) out.push(s.bold('Diagnosis'));
  for (const f of full) out.push(...findingBlock(f, s, width), '');
  const rest = findings.slice(full.length);
  if (rest.length > 0) {
    out.push(s.dim(`  also: ${rest.map((f) => `${f.title} [${f.category}]`).join('; ')}`), '');
  }
  const table = hotspotTable(report.hotspots, options.hotspots ?? 8, s);
  if (table.length > 0)
    out.push(
      s.bold('Hotspots') + s.dim(' (self time after attribution: native, core and dependency work charged to the app caller)'),
      ...table,
      '',
    );
  const cost = agentCostLine(report);
  if (cost) out.push(...wrap(cost, width).map((l, i) => (i === 0 ? l : `  ${l}`)), '');
  return out.join('\n');
}

/** What the agent cost the server it measured (report.json telemetry.agentCost), so figures read against that. */
export function agentCostLine(report: Report): string | undefined {
  const c = report.telemetry?.agentCost;
  if (!c) return undefined;
  const pctOf = (ms: number) => (c.targetCpuMs > 0 ? `${num(Math.round((ms / c.targetCpuMs) * 1000) / 10)} %` : '0 %');
  const parts = [`callbacks ${pctOf(c.mainThreadMs)}`, `worker ${pctOf(c.workerMs)}`];
  if (c.profilerThreadMs > 0) parts.push(`profiler thread ${pctOf(c.profilerThreadMs)}`);
  if (c.cpuSamplingIntervalUs) parts.push(`CPU profile at ${num(Math.round(1e6 / c.cpuSamplingIntervalUs))} Hz`);
  return (
    `Agent cost: ${num(Math.round(c.shareOfCpu * 1000) / 10)} % of the target's CPU over the load window (${parts.join(', ')}; ` +
    `${num(Math.round(c.loopShare * 1000) / 10)} % of the loop's time), at least: V8's stack sampling on the loop is not counted.`
  );
}

/** Agents shown in full; the rest are counted. */
const AGENT_ERRORS_SHOWN = 5;

/** What the in-process agents failed to do, target processes first (each costs the diagnosis data). */
function agentErrorBlock(report: Report, s: TerminalStyler, width: number): string[] {
  const errors = report.agentErrors ?? [];
  if (errors.length === 0) return [];
  const out = [s.bold('Agent errors') + s.dim(" (parts of hotpath's in-process agent that failed; the rest kept running)")];
  for (const e of errors.slice(0, AGENT_ERRORS_SHOWN)) {
    const where = `pid ${e.pid}${e.threadId > 0 ? ` thread ${e.threadId}` : ''}${e.target ? '' : ', not a target'}`;
    const text = wrap(`${e.what} (${where}): ${e.message}`, width - 4);
    out.push(...text.map((l, i) => `  ${i === 0 ? (e.target ? s.red('✖') : s.dim('·')) : ' '} ${l}`));
  }
  if (errors.length > AGENT_ERRORS_SHOWN)
    out.push(s.dim(`    and ${errors.length - AGENT_ERRORS_SHOWN} more in report.json (agentErrors)`));
  out.push('');
  return out;
}

function badge(f: Finding, s: TerminalStyler): string {
  if (f.category === 'healthy') return s.green('✔ healthy ');
  if (f.severity === 'critical') return s.red('✖ critical');
  if (f.severity === 'warning') return s.yellow('▲ warning ');
  return s.dim('ℹ info    ');
}

function findingBlock(f: Finding, s: TerminalStyler, width: number): string[] {
  const lines = [`${badge(f, s)} ${s.bold(f.title)} ${s.dim(`[${f.category}]`)}`];
  if (f.culprit)
    lines.push(
      `  ${s.dim('culprit ')} ${s.bold(f.culprit.function)}  ${f.culprit.file}${f.culprit.line > 0 ? `:${f.culprit.line}${f.culprit.column ? `:${f.culprit.column}` : ''}` : ''}`,
    );
  for (const p of pathLines(f)) lines.push(...wrap(p.text, width - 12).map((l, i) => `  ${s.dim(i === 0 ? p.label : '        ')} ${l}`));
  lines.push(...wrap(f.summary, width - 12).map((l, i) => `  ${s.dim(i === 0 ? 'what    ' : '        ')} ${l}`));
  const figures = evidenceFigures(f);
  if (figures) lines.push(...wrap(figures, width - 12).map((l, i) => `  ${s.dim(i === 0 ? 'evidence' : '        ')} ${l}`));
  const also = f.evidence.alsoFound;
  if (isAlsoFoundList(also))
    lines.push(...wrap(alsoFoundText(also), width - 12).map((l, i) => `  ${s.dim(i === 0 ? 'also    ' : '        ')} ${l}`));
  // Every paragraph, each from a new line: the later ones carry what the first does not (a
  // runtime flag to try, the profile to record next).
  const fix = f.recommendation
    .split('\n\n')
    .map(plain)
    .filter(Boolean)
    .flatMap((p) => wrap(p, width - 12));
  lines.push(...fix.map((l, i) => `  ${s.dim(i === 0 ? 'fix     ' : '        ')} ${l}`));
  return lines;
}

/** `key value · key value`, numbers and short strings only (arrays and objects live in report.json). */
export function evidenceFigures(f: Finding): string {
  return Object.entries(f.evidence)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 40))
    .slice(0, EVIDENCE_FIELDS)
    .map(([k, v]) => `${k} ${typeof v === 'number' ? num(v) : showInfinity(String(v))}`)
    .join(' · ');
}

/** Markdown to terminal text: drop backticks and emphasis markers. */
function plain(md: string): string {
  return md
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*([^*]*)\*\*/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

function wrap(text: string, width: number): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line !== '' && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else {
      line = line === '' ? w : `${line} ${w}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** App functions first (the code the user can change), then the rest, each by self time. */
export function orderHotspots(hotspots: readonly Hotspot[], limit: number): Hotspot[] {
  const app = hotspots.filter((h) => h.kind === 'app');
  const other = hotspots.filter((h) => h.kind !== 'app' && h.kind !== 'idle' && h.kind !== 'agent');
  const appRows = app.slice(0, Math.max(1, Math.ceil(limit * 0.6)));
  return [...appRows, ...other.slice(0, limit - appRows.length)].slice(0, limit);
}

function hotspotTable(hotspots: readonly Hotspot[], limit: number, s: TerminalStyler): string[] {
  const rows = orderHotspots(hotspots, limit);
  if (rows.length === 0) return [];
  const name = Math.min(36, Math.max(8, ...rows.map((h) => h.function.length)));
  const header = `  ${'self'.padStart(6)}  ${'self ms'.padStart(9)}  ${'function'.padEnd(name)}  ${'kind'.padEnd(10)}  location`;
  return [
    s.dim(header),
    ...rows.map((h) => {
      const fn = h.function.length > name ? `${h.function.slice(0, name - 1)}…` : h.function.padEnd(name);
      const loc = h.file ? `${h.file}${h.line > 0 ? `:${h.line}` : ''}` : '';
      const row = `  ${`${(h.selfShare * 100).toFixed(1)}%`.padStart(6)}  ${num(Math.round(h.selfMs)).padStart(9)}  ${fn}  ${h.kind.padEnd(10)}  ${loc}`;
      return h.kind === 'app' ? row : s.dim(row);
    }),
  ];
}
