// Analysis budget: turning a 60 s run (600 telemetry samples per thread, GC events, growth
// reports, and a CPU profile at 1 ms: 60k samples over a few thousand call-tree nodes) into
// report.json must take under 1 s. Measures buildReport (read profile, build the call tree,
// every analyzer, hotspots, telemetry summary) on a fresh RunData each time, so no cache helps.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchSuite } from './suite.js';
import type { RunData } from '../src/run-dir/run-data.js';
import { buildReport } from '../src/report/build-report.js';
import { syntheticRun, SYNTHETIC_START } from '../test/fixtures/telemetry/synthetic-run.js';
import { median } from './median.js';
import { sixtySecondProfile } from './profile.bench.js';

const BUDGET_MS = 1000;
const CWD = '/srv/bench-app';

function sixtySecondRun(dir: string): RunData {
  const path = join(dir, 'cpu-4242-0.cpuprofile');
  writeFileSync(path, JSON.stringify(sixtySecondProfile(5000, 60_000)));
  const site = { function: 'register', file: `${CWD}/src/routes.js`, line: 10, column: 3 };
  return syntheticRun({
    seed: 3,
    noise: 0.2,
    durationS: 60,
    cwd: CWD,
    rps: 3000,
    minorGcPerS: 20,
    majorGcPerS: 0.5,
    latencyMs: (p) => 2 + 3 * p,
    listenerGrowth: [{ emitter: 'Server', event: 'request', perRequest: 0, base: 2, site }],
    routeGrowth: [{ framework: 'express', method: 'GET', path: '/x', perSecond: 2, site }],
    syncCalls: [{ api: 'fs.readFileSync', perRequest: 0.01, msEach: 0.2, site }],
    profiles: [{ kind: 'cpu', pid: 4242, threadId: 0, path, start: SYNTHETIC_START, end: SYNTHETIC_START + 60_000 }],
  });
}

function time(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

export const analyzeBench: BenchSuite = {
  name: 'analyze',
  async run(ctx: BenchContext): Promise<string> {
    const dir = join(ctx.scratch, 'analyze');
    mkdirSync(dir, { recursive: true });
    const run = sixtySecondRun(dir);
    const runs = ctx.quick ? 3 : 7;
    const full: number[] = [];
    const telemetryOnly: number[] = [];
    let findings = 0;
    for (let i = 0; i < runs; i++) {
      full.push(
        time(() => {
          findings = buildReport({ ...run }).findings.length;
        }),
      );
      telemetryOnly.push(time(() => buildReport({ ...run, profiles: [] })));
    }
    const m = median(full);
    ctx.log(`analyze: median ${m.toFixed(0)} ms (${runs} runs), telemetry only ${median(telemetryOnly).toFixed(0)} ms`);
    return [
      '## analyze: diagnosis of a 60 s run',
      '',
      'buildReport (profile read and call tree, every analyzer, hotspots, telemetry summary) on a synthetic',
      '60 s run: 600 telemetry samples, ~1,200 GC events, growth reports, and a CPU profile of 60,000 samples',
      `over 5,000 call-tree nodes. Fresh RunData each time (no cache). ${runs} runs, Node ${process.version}.`,
      '',
      '| measure | median | worst | budget | ratio to budget |',
      '|---|---|---|---|---|',
      `| full analysis | ${m.toFixed(0)} ms | ${Math.max(...full).toFixed(0)} ms | ${BUDGET_MS} ms | ${(m / BUDGET_MS).toFixed(2)} |`,
      `| telemetry only (no profile) | ${median(telemetryOnly).toFixed(0)} ms | ${Math.max(...telemetryOnly).toFixed(0)} ms | | |`,
      '',
      `${findings} finding${findings === 1 ? '' : 's'} produced. ${m < BUDGET_MS ? 'Within budget.' : '**Over budget.**'}`,
      '',
    ].join('\n');
  },
};
