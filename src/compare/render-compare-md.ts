// The comparison as Markdown, fit for a pull-request comment (compare.md, `hotpath compare --md`).

import type { Comparison, FindingChange, FunctionChange, MetricChange } from '../report/compare-schema.js';

const pct = (x: number | undefined) => (x === undefined ? '—' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

function value(x: number, unit: string): string {
  if (unit === 'share') return `${(x * 100).toFixed(1)}%`;
  if (unit === 'bytes') return `${(x / 1048576).toFixed(1)} MB`;
  if (unit === 'count') return String(Math.round(x));
  const digits = Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
  return `${x.toFixed(digits)} ${unit}`;
}

function metricRows(rows: readonly MetricChange[]): string[] {
  const out = ['| | before | after | change | 95% interval | verdict |', '|---|---:|---:|---:|---|---|'];
  for (const m of rows) {
    const ci = m.interval ? `${pct(m.interval.low)} … ${pct(m.interval.high)}` : '—';
    const verdict = m.verdict === 'better' ? '**better**' : m.verdict === 'worse' ? '**worse**' : (m.verdict ?? '');
    out.push(`| ${m.name} | ${value(m.before, m.unit)} | ${value(m.after, m.unit)} | ${pct(m.change)} | ${ci} | ${verdict} |`);
  }
  return out;
}

const us = (x: number) => `${x.toFixed(x >= 100 ? 0 : 1)} µs`;

function functionRows(rows: readonly FunctionChange[]): string[] {
  const out = [
    '| function | file | self/req before | self/req after | change | total/req before | total/req after |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const f of rows) {
    const status = f.status === 'changed' ? '' : ` (${f.status})`;
    out.push(
      `| \`${f.function}\`${status} | ${f.file || '—'} | ${us(f.selfBeforeUs)} | ${us(f.selfAfterUs)} | ${f.selfChangeUs >= 0 ? '+' : ''}${us(f.selfChangeUs)} | ${us(f.totalBeforeUs)} | ${us(f.totalAfterUs)} |`,
    );
  }
  return out;
}

function findingLine(f: FindingChange): string {
  const where = f.culprit ? ` in \`${f.culprit.function}\` (${f.culprit.file}:${f.culprit.line})` : '';
  const sev =
    f.severityBefore && f.severityAfter && f.severityBefore !== f.severityAfter
      ? ` (${f.severityBefore} → ${f.severityAfter})`
      : ` (${f.severityAfter ?? f.severityBefore})`;
  return `- \`${f.code}\`${where}: ${f.title}${sev}`;
}

/** The headline: what happened to throughput and p99. */
export function compareHeadline(c: Comparison): string {
  const t = c.load.find((m) => m.name === 'throughput');
  const p = c.load.find((m) => m.name === 'latency p99');
  const say = (m: MetricChange | undefined) => (m ? `${m.name} ${pct(m.change)} (${m.verdict ?? 'not tested'})` : '');
  return [say(t), say(p)].filter(Boolean).join(', ');
}

const share = (x: number) => `${(x * 100).toFixed(0)}%`;

/** The margin the load verdicts were judged at, and the machine's shares when the runs measured them. */
function marginNote(c: Comparison): string {
  const m = c.machine;
  const judged = m
    ? `, at equal CPU share: the event loop was on a CPU for ${share(m.loopCpuShareBefore)} of its busy time before and ${share(m.loopCpuShareAfter)} after (the machine's doing), and the after run's seconds are scaled to the before's share`
    : '';
  return `_A change is called real when its 95% bootstrap interval over the per-second values lies wholly beyond ±${share(c.minEffect)}${judged}._`;
}

export function renderCompareMarkdown(c: Comparison, limit = 15): string {
  const lines = [
    '## hotpath compare',
    '',
    compareHeadline(c),
    '',
    `Before: \`${c.before.runDir}\` (${c.before.requests} requests)  `,
    `After: \`${c.after.runDir}\` (${c.after.requests} requests)`,
    '',
    ...metricRows(c.load),
    '',
    marginNote(c),
    '',
  ];
  if (c.functions) {
    lines.push('### Functions (CPU per request)', '', ...functionRows(c.functions.slice(0, limit)), '');
  }
  const { resolved, stillPresent } = c.findings;
  lines.push('### Findings', '');
  if (resolved.length + c.findings.new.length + stillPresent.length === 0) lines.push('No problem found in either run.');
  if (resolved.length) lines.push('**Resolved**', '', ...resolved.map(findingLine), '');
  if (c.findings.new.length) lines.push('**New**', '', ...c.findings.new.map(findingLine), '');
  if (stillPresent.length) lines.push('**Still present**', '', ...stillPresent.map(findingLine), '');
  if (c.telemetry.length) lines.push('### Telemetry', '', ...metricRows(c.telemetry), '');
  if (c.mismatches.length) lines.push('### Differences between the runs', '', ...c.mismatches.map((m) => `- ${m}`), '');
  if (c.missing.length) lines.push('### Missing', '', ...c.missing.map((m) => `- ${m}`), '');
  return (
    lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}
