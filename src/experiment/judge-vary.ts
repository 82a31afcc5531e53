// One row per value of an experiment (medians over its runs), ranked by median throughput, and
// the best value with its evidence: throughput, p99, GC share and RSS, and whether its lead
// over the runner-up is beyond the noise of the runs (a bootstrap over the runs when repeated).

import { median, medianChange, medianInterval } from '../compare/median-interval.js';
import { VARY_VERSION, type VaryResult, type VaryRow, type VaryRun } from './vary-result.js';
import { variantLabel, type VarySpec } from './vary-spec.js';

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;

function row(spec: VarySpec, value: string, runs: readonly VaryRun[]): VaryRow {
  const mine = runs.filter((r) => r.value === value);
  const figs = mine.flatMap((r) => (r.figures ? [r.figures] : []));
  const gc = figs.flatMap((f) => (f.gcShare === undefined ? [] : [f.gcShare]));
  const rss = figs.flatMap((f) => (f.rssMaxBytes === undefined ? [] : [f.rssMaxBytes]));
  return {
    value,
    label: variantLabel(spec, value),
    runs: mine.length,
    measured: figs.length,
    ...(figs.length ? { rps: medianInterval(figs.map((f) => f.rps)), p99Ms: medianInterval(figs.map((f) => f.p99Ms)) } : {}),
    ...(gc.length ? { gcShare: median(gc) } : {}),
    ...(rss.length ? { rssMaxBytes: median(rss) } : {}),
  };
}

export function judgeVary(spec: VarySpec, command: string[], repeat: number, runs: VaryRun[]): VaryResult {
  const rows = spec.values.map((v) => row(spec, v, runs));
  const ranked = rows.filter((r) => r.rps).sort((a, b) => b.rps!.median - a.rps!.median || a.p99Ms!.median - b.p99Ms!.median);
  ranked.forEach((r, i) => {
    r.rank = i + 1;
  });
  const out: VaryResult = { version: VARY_VERSION, vary: spec, command, repeat, runs, rows };
  const [top, next] = ranked;
  if (!top) return out;
  const rpsOf = (value: string) => runs.flatMap((r) => (r.value === value && r.figures ? [r.figures.rps] : []));
  const lead = next ? medianChange(rpsOf(next.value), rpsOf(top.value)) : undefined;
  const clear = next === undefined || (lead?.low !== undefined && lead.low > 0);
  const parts = [
    `${top.rps!.median.toFixed(1)} req/s`,
    ...(next && lead?.change !== undefined
      ? [`${pct(lead.change)} over ${next.label}${lead.low !== undefined ? ` (95% interval ${pct(lead.low)} … ${pct(lead.high!)})` : ''}`]
      : []),
    `p99 ${top.p99Ms!.median.toFixed(1)} ms`,
    ...(top.gcShare !== undefined ? [`GC ${(top.gcShare * 100).toFixed(1)}% of wall time`] : []),
    ...(top.rssMaxBytes !== undefined ? [`RSS ${mb(top.rssMaxBytes)}`] : []),
  ];
  const caveat = clear
    ? ''
    : repeat < 2
      ? '; one run per value cannot tell this lead from noise: add --repeat 3'
      : '; the lead is within the noise of the runs (its interval reaches 0)';
  out.best = {
    value: top.value,
    label: top.label,
    ...(next && lead ? { leadOverNext: { value: next.value, ...lead } } : {}),
    clear,
    evidence: `${parts.join(', ')}${caveat}`,
  };
  return out;
}
