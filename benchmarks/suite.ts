// The contract of one benchmark suite. `npm run bench` runs every suite listed in
// benchmarks/suites.ts in one process, one after another (never in parallel: these are
// 2-core shared machines), and writes their Markdown sections to docs/benchmarks.md.
// Each suite compares side by side in the same run and reports ratios, not lone figures.

export interface BenchContext {
  /** Repository root. */
  root: string;
  /** Scratch directory for this bench run (removed afterwards). */
  scratch: string;
  /** Directory holding the benchmark-only tools (autocannon, clinic, 0x) in node_modules/.bin. */
  toolsBin: string;
  /** Quick mode (HOTPATH_BENCH_QUICK=1): shorter loads, for checking that a suite works. */
  quick: boolean;
  log(message: string): void;
}

export interface BenchSuite {
  name: string;
  /** Returns a Markdown section (starting with a `## ` heading). */
  run(ctx: BenchContext): Promise<string>;
}
