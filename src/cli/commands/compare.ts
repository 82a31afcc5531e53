// `hotpath compare <before-run-dir> <after-run-dir>`: did the change make the server faster?
// Throughput and latency with a confidence interval, CPU per request per function, findings
// resolved/new, telemetry deltas (docs/compare.md). Writes compare.json, compare.md and
// compare.html (the differential flame graph) into the after run directory; `--json` prints the comparison on stdout, `--md` the Markdown.

import { resolve } from 'node:path';
import type { Command } from '../command.js';
import type { CliIO } from '../io.js';
import type { OptionSpec, ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { compareRunDirs } from '../../compare/compare-runs.js';
import { writeComparison } from '../../compare/write-comparison.js';
import { renderCompareMarkdown } from '../../compare/render-compare-md.js';

export const compareOptionSpecs: readonly OptionSpec[] = [
  { key: 'json', flag: 'json', type: 'boolean', default: false, description: 'Print the comparison as JSON on stdout' },
  {
    key: 'md',
    flag: 'md',
    type: 'boolean',
    default: false,
    description: 'Print the Markdown summary on stdout (for a pull-request comment)',
    conflicts: ['json'],
  },
  {
    key: 'minEffect',
    flag: 'min-effect',
    type: 'number',
    valueName: '<percent>',
    default: 10,
    min: 0,
    max: 100,
    description: 'Noise margin: a change is real only when its 95% interval lies wholly beyond ±this percentage',
  },
  {
    key: 'allowMismatch',
    flag: 'allow-mismatch',
    type: 'boolean',
    default: false,
    description: 'Compare runs that measured different requests (path, method, scenario) instead of refusing',
  },
];

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length !== 2) {
    throw hotpathError(
      args.positionals.length < 2 ? 'HOTPATH_ERR_MISSING_ARGUMENT' : 'HOTPATH_ERR_INVALID_OPTION',
      `hotpath compare takes two run directories, before and after; got ${args.positionals.length}`,
      { showUsage: true },
    );
  }
  const [before, after] = args.positionals.map((p) => resolve(io.cwd, p));
  const { comparison: c, diff } = await compareRunDirs(before, after, {
    minEffect: (args.values.minEffect as number) / 100,
    allowMismatch: args.values.allowMismatch === true,
  });
  let md: string;
  try {
    md = await writeComparison(c, diff);
  } catch (err) {
    // A read-only run directory (a downloaded artifact) still gets its comparison printed.
    md = renderCompareMarkdown(c);
    io.stderr.write(
      `hotpath: compare.json, compare.md and compare.html were not written into ${c.after.runDir}: ${(err as Error).message}\n`,
    );
  }
  if (args.values.md === true) io.stdout.write(md);
  else io.stderr.write(md);
  if (args.values.json === true) io.stdout.write(JSON.stringify(c, null, 2) + '\n');
  return 0;
}

export const compareCommand: Command = {
  name: 'compare',
  summary: 'Compare two run directories: is the after run really faster, and where did the time go',
  usage: 'hotpath compare [options] <before-run-dir> <after-run-dir>',
  details: `Writes compare.json and compare.md into the after run directory (see docs/compare.md).

Examples:
  hotpath compare .hotpath/20261122-101500-server .hotpath/20261122-103000-server
  hotpath compare --md baseline/ .hotpath/latest > comment.md`,
  options: compareOptionSpecs,
  run: execute,
};
