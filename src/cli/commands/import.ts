// `hotpath import <perf.script> [--json] [--out <dir>] [--pid <pid>]`: reads `perf script`
// output (Linux perf with node's --perf-basic-prof) into a run directory: report.html with the
// flame graph of kernel, libuv, V8 C++ and JS frames, report.md and the exports. See docs/prof.md.

import type { Command } from '../command.js';
import { styler, type CliIO } from '../io.js';
import type { OptionSpec, ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { importPerfScript } from '../../native/import-perf.js';
import { formatRunSummary } from '../../run/run-summary.js';

const options: readonly OptionSpec[] = [
  { key: 'json', flag: 'json', type: 'boolean', default: false, description: 'Print report.json on stdout' },
  {
    key: 'out',
    flag: 'out',
    short: 'o',
    type: 'string',
    default: '.hotpath',
    valueName: '<dir>',
    description: 'Where the run directory is created',
  },
  {
    key: 'pid',
    flag: 'pid',
    type: 'integer',
    min: 1,
    valueName: '<pid>',
    description: 'Import this process only (default: every process with JS frames)',
  },
];

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  const [file, ...extra] = args.positionals;
  if (file === undefined)
    throw hotpathError('HOTPATH_ERR_MISSING_ARGUMENT', 'Which file? e.g. perf script > out.perf; hotpath import out.perf', {
      showUsage: true,
    });
  if (extra.length > 0)
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `hotpath import takes one file; got ${args.positionals.length}`, { showUsage: true });
  const v = args.values;
  const result = await importPerfScript(file, {
    cwd: io.cwd,
    out: typeof v.out === 'string' ? v.out : '.hotpath',
    ...(typeof v.pid === 'number' ? { pid: v.pid } : {}),
  });
  const s = styler(io);
  io.stderr.write(result.processes.map((p) => `imported pid ${p.pid} (${p.comm}): ${p.samples} samples`).join('\n') + '\n\n');
  io.stderr.write(formatRunSummary(result.report, io.cwd, s, result.warnings));
  if (v.json === true) io.stdout.write(JSON.stringify(result.report, null, 2) + '\n');
  return 0;
}

export const importCommand: Command = {
  name: 'import',
  summary: 'Read `perf script` output (perf record -g, node --perf-basic-prof) into a report',
  usage: 'hotpath import [options] <perf.script>',
  details: [
    'Example (Linux):',
    '  node --perf-basic-prof-only-functions --interpreted-frames-native-stack server.js &',
    '  perf record -F 99 -g -p <pid> -- sleep 30',
    '  perf script > out.perf',
    '  hotpath import out.perf',
  ].join('\n'),
  options,
  run: execute,
};
