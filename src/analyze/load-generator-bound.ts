// Load-generator-bound: the load generator, not the server, was saturated, so throughput and
// latency describe the generator's limit. Info severity: it qualifies the numbers, it does not
// diagnose the server.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { loopStats } from './signals/loop-stats.js';
import { round } from './signals/stats.js';

export function loadGeneratorBound(run: RunData): Finding[] {
  const g = run.load?.generator;
  if (!g?.saturated) return [];
  const s = loopStats(run);
  return [
    {
      code: 'HOTPATH_LOAD_GENERATOR_BOUND',
      category: 'load-generator-bound',
      severity: 'info',
      title: 'The load generator was saturated: the numbers are a lower bound',
      summary:
        `The load generator ran out of CPU (event-loop utilization ${round(g.maxElu * 100, 0)} %)` +
        (s ? ` while the server's loop was busy ${round(s.eluMean * 100, 0)} %` : '') +
        '; throughput and latency describe the generator as much as the server.',
      evidence: {
        generatorMaxElu: round(g.maxElu, 3),
        generatorCpuMs: round(g.cpuUserMs + g.cpuSystemMs, 0),
        ...(s ? { serverEluMean: round(s.eluMean, 3) } : {}),
        ...(g.warnings.length > 0 ? { warnings: g.warnings } : {}),
      },
      recommendation:
        'Give the generator more room: more `--workers`, fewer connections, run it on another machine ' +
        '(or pin target and generator to different cores with `taskset`), or use an open-model run (`--rate`) below the limit.',
      impact: 0,
    },
  ];
}
