// compareRuns: two run directories read back and compared (docs/compare.md). Both need their
// load results; everything else is compared as far as both runs hold it, and what one lacks
// (a CPU profile, telemetry) is named in `missing` instead of failing the comparison.

import { hotpathError } from '../errors.js';
import { readRunDir } from '../profile/read-run.js';
import type { RunData } from '../run-dir/run-data.js';
import { buildReport } from '../report/build-report.js';
import type { Report } from '../report/report-schema.js';
import { cpuViewOf } from '../analyze/signals/cpu-view.js';
import { COMPARISON_VERSION, type Comparison, type DiffTree } from '../report/compare-schema.js';
import { compareLoad } from './compare-load.js';
import { machineShare } from './loop-cpu-share.js';
import { compareFunctions } from './compare-functions.js';
import { compareFindings } from './compare-findings.js';
import { compareTelemetry } from './compare-telemetry.js';
import { runMismatches } from './run-mismatches.js';
import { DEFAULT_MIN_EFFECT } from './metric-verdict.js';
import { diffTree } from './diff-tree.js';

export interface CompareOptions {
  /** Noise margin, 0..1 (default 0.1). */
  minEffect?: number;
  /** Compare runs that measured different requests (listed in `mismatches`) instead of refusing. */
  allowMismatch?: boolean;
}

interface Side {
  run: RunData;
  report: Report;
  label: 'before' | 'after';
}

function loadOf(side: Side) {
  const load = side.run.load;
  if (!load || load.requests.total === 0) {
    throw hotpathError(
      'HOTPATH_ERR_COMPARE_NO_LOAD',
      `The ${side.label} run (${side.run.dir}) has ${load ? 'no completed request' : 'no load results (load.json)'}: there is nothing to compare it on`,
      { details: { dir: side.run.dir, side: side.label } },
    );
  }
  return load;
}

const outline = (s: Side) => ({
  runDir: s.run.dir,
  command: s.run.meta.command,
  ...(s.run.load?.url ? { url: s.run.load.url } : {}),
  requests: s.run.load?.requests.total ?? 0,
  durationMs: s.run.load?.durationMs ?? 0,
});

export async function compareRuns(beforeDir: string, afterDir: string, options: CompareOptions = {}): Promise<Comparison> {
  return (await compareRunDirs(beforeDir, afterDir, options)).comparison;
}

/** The comparison and, when both runs have a CPU profile, their differential call tree (compare.html). */
export async function compareRunDirs(
  beforeDir: string,
  afterDir: string,
  options: CompareOptions = {},
): Promise<{ comparison: Comparison; diff?: DiffTree }> {
  const read = async (dir: string, label: Side['label']): Promise<Side> => {
    const run = await readRunDir(dir);
    return { run, report: buildReport(run), label };
  };
  const before = await read(beforeDir, 'before');
  const after = await read(afterDir, 'after');
  const comparison = compareRead(before, after, options);
  const bv = cpuViewOf(before.run);
  const av = cpuViewOf(after.run);
  return { comparison, ...(bv && av ? { diff: diffTree(bv.tree, comparison.before.requests, av.tree, comparison.after.requests) } : {}) };
}

function compareRead(before: Side, after: Side, options: CompareOptions): Comparison {
  const minEffect = options.minEffect ?? DEFAULT_MIN_EFFECT;
  const bl = loadOf(before);
  const al = loadOf(after);
  const mm = runMismatches(before.run, after.run, bl, al);
  if (mm.blocking.length > 0 && !options.allowMismatch) {
    throw hotpathError(
      'HOTPATH_ERR_COMPARE_MISMATCH',
      `The runs measured different requests (${mm.blocking.join('; ')}); compare runs of the same load, or pass --allow-mismatch`,
      { details: { mismatches: mm.blocking } },
    );
  }
  const missing: string[] = [];
  for (const s of [before, after]) for (const w of s.run.readWarnings) missing.push(`${s.label} run: ${w}`);
  const bv = cpuViewOf(before.run);
  const av = cpuViewOf(after.run);
  for (const [s, v] of [
    [before, bv],
    [after, av],
  ] as const) {
    if (!v) missing.push(`${s.label} run has no CPU profile of its target: the per-function comparison is left out`);
  }
  const bt = before.report.telemetry;
  const at = after.report.telemetry;
  for (const [s, t] of [
    [before, bt],
    [after, at],
  ] as const) {
    if (!t) missing.push(`${s.label} run has no agent telemetry: the telemetry deltas are left out`);
  }
  const machine = machineShare(before.run, after.run);
  return {
    version: COMPARISON_VERSION,
    before: outline(before),
    after: outline(after),
    minEffect,
    load: compareLoad(bl, al, minEffect, machine?.ratio),
    ...(machine ? { machine: { loopCpuShareBefore: machine.before, loopCpuShareAfter: machine.after } } : {}),
    ...(bv && av ? { functions: compareFunctions(bv, bl.requests.total, av, al.requests.total) } : {}),
    findings: compareFindings(before.report.findings, after.report.findings),
    telemetry: bt && at ? compareTelemetry(bt, bl.requests.total, at, al.requests.total) : [],
    mismatches: [...mm.blocking, ...mm.weakening],
    missing,
  };
}
