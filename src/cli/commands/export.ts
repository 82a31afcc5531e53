// `hotpath export <run-dir> --format pprof|speedscope|folded|cpuprofile`: converts a run's
// CPU (or, with --heap, allocation) profile for other viewers: go tool pprof, Pyroscope and
// Grafana (pprof), speedscope, flamegraph.pl/inferno (folded), Chrome DevTools (cpuprofile).
// The written path goes to stderr; nothing is printed on stdout.

import { resolve } from 'node:path';
import type { Command } from '../command.js';
import { styler, type CliIO } from '../io.js';
import type { OptionSpec, ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { readRunDir } from '../../profile/read-run.js';
import { EXPORT_FORMATS, exportProfile, type ExportFormat } from '../../report/export/export-profile.js';

const options: readonly OptionSpec[] = [
  {
    key: 'format',
    flag: 'format',
    short: 'f',
    type: 'string',
    choices: EXPORT_FORMATS,
    default: 'pprof',
    valueName: '<format>',
    description: 'pprof, speedscope, folded or cpuprofile',
  },
  {
    key: 'out',
    flag: 'out',
    short: 'o',
    type: 'string',
    valueName: '<file>',
    description: 'Where to write (default: next to the profile in the run directory)',
  },
  {
    key: 'thread',
    flag: 'thread',
    type: 'string',
    valueName: '<pid:tid>',
    description: "Export this thread's profile (default: the target thread's)",
  },
  {
    key: 'heap',
    flag: 'heap',
    type: 'boolean',
    default: false,
    description: 'Export the allocation (heap) profile instead of the CPU profile',
  },
];

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  const [dirArg, ...extra] = args.positionals;
  if (dirArg === undefined) {
    throw hotpathError('HOTPATH_ERR_MISSING_ARGUMENT', 'Which run? e.g. hotpath export .hotpath/20261122-101500-server --format pprof', {
      showUsage: true,
    });
  }
  if (extra.length > 0)
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `hotpath export takes one run directory; got ${args.positionals.length}`, {
      showUsage: true,
    });
  const run = await readRunDir(resolve(io.cwd, dirArg));
  const v = args.values;
  const result = await exportProfile(run, {
    format: (v.format ?? 'pprof') as ExportFormat,
    ...(typeof v.out === 'string' ? { out: resolve(io.cwd, v.out) } : {}),
    ...(typeof v.thread === 'string' ? { thread: v.thread } : {}),
    heap: v.heap === true,
    exporter: `hotpath ${run.meta.hotpathVersion}`,
  });
  const s = styler(io);
  io.stderr.write(`${result.path}\n`);
  if (result.others.length > 0 && typeof v.thread !== 'string') {
    const list = result.others.map((p) => `${p.pid}:${p.threadId}`).join(', ');
    io.stderr.write(
      s.dim(`exported thread ${result.profile.pid}:${result.profile.threadId}; others: ${list} (pick one with --thread)`) + '\n',
    );
  }
  return 0;
}

export const exportCommand: Command = {
  name: 'export',
  summary: "Convert a run's profile to pprof, speedscope, folded stacks or .cpuprofile",
  usage: 'hotpath export [options] <run-dir>',
  details: [
    'Formats: pprof (.pb.gz: go tool pprof, Pyroscope, Grafana), speedscope (.speedscope.json),',
    'folded (.folded: flamegraph.pl, inferno), cpuprofile (the original, for Chrome DevTools).',
    '',
    'Examples:',
    '  hotpath export .hotpath/<run> --format pprof        then: go tool pprof -http=: <file>',
    '  hotpath export .hotpath/<run> --format speedscope   then open it at speedscope.app (offline: npx speedscope)',
    '  hotpath export .hotpath/<run> --format folded -o out.folded   then: flamegraph.pl out.folded > flame.svg',
  ].join('\n'),
  options,
  run: execute,
};
