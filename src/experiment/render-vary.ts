// The experiment's table, as printed on stderr and written to vary.md: one row per value with
// its runs' median throughput, p99, GC share and RSS, its rank, and the best value last.

import type { VaryResult } from './vary-result.js';

const cell = (x: number | undefined, f: (n: number) => string) => (x === undefined ? 'n/a' : f(x));

export function renderVaryMarkdown(v: VaryResult): string {
  const lines = [
    `## hotpath vary: ${v.vary.text}`,
    '',
    `\`${v.command.join(' ')}\`, ${v.repeat} run${v.repeat > 1 ? 's' : ''} per value, interleaved; medians over each value's runs.`,
    '',
    '| value | rank | throughput | p99 | GC share | RSS max | runs |',
    '|---|---|---|---|---|---|---|',
    ...v.rows.map(
      (r) =>
        `| \`${r.label}\` | ${r.rank ?? '–'} | ${cell(r.rps?.median, (n) => `${n.toFixed(1)} req/s`)} | ${cell(r.p99Ms?.median, (n) => `${n.toFixed(1)} ms`)} | ${cell(r.gcShare, (n) => `${(n * 100).toFixed(1)}%`)} | ${cell(r.rssMaxBytes, (n) => `${(n / 1048576).toFixed(0)} MB`)} | ${r.measured}/${r.runs} |`,
    ),
    '',
    v.best ? `**Best: \`${v.best.label}\`**: ${v.best.evidence}.` : 'No run of any value has load results: there is no best value.',
  ];
  const failed = v.runs.filter((r) => r.failed);
  if (failed.length) {
    lines.push('', 'Runs without figures:', ...failed.map((r) => `- \`${r.value}\` (run ${r.order}): ${r.failed} (${r.runDir})`));
  }
  return lines.join('\n') + '\n';
}
