// Every benchmark suite, in the order they run and appear in docs/benchmarks.md.
import type { BenchSuite } from './suite.js';
import { loadBench } from './load.bench.js';
import { overheadBench } from './overhead.bench.js';
import { protectBench } from './protect.bench.js';
import { reportBench } from './report.bench.js';
import { analyzeBench } from './analyze.bench.js';
import { profileBench } from './profile.bench.js';
import { agentCostBench } from './agent-cost.bench.js';
import { readersBench } from './readers.bench.js';

import { profBench } from './prof.bench.js';
import { nativeBench } from './native.bench.js';

export const suites: BenchSuite[] = [
  loadBench,
  overheadBench,
  protectBench,
  reportBench,
  analyzeBench,
  profileBench,
  agentCostBench,
  readersBench,

  profBench,
  nativeBench,
];
