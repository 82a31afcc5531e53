// `hotpath prof <isolate-*.log...> [--json] [--out <dir>]`: reads V8 tick logs (`node --prof`),
// prints what `node --prof-process` prints (stdout; --json: the same figures as JSON), and
// writes a run directory with report.html, report.md and every export format (stderr says
// where). See docs/prof.md.

import type { Command } from '../command.js';
import { styler, type CliIO } from '../io.js';
import type { OptionSpec, ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { checkTickLogFiles, profRun } from '../../native/prof-run.js';

const options: readonly OptionSpec[] = [
  {
    key: 'json',
    flag: 'json',
    type: 'boolean',
    default: false,
    description: 'Print the figures as JSON on stdout instead of the --prof-process text',
  },
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
    key: 'report',
    flag: 'report',
    type: 'boolean',
    default: true,
    description: 'Print the figures only: no run directory, reports or exports',
  },
];

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  const files = args.positionals;
  if (files.length === 0) {
    throw hotpathError(
      'HOTPATH_ERR_MISSING_ARGUMENT',
      'Which tick log? e.g. hotpath prof isolate-0x5a1c0a0-4242-v8.log (written by node --prof)',
      { showUsage: true },
    );
  }
  checkTickLogFiles(files, io.cwd);
  const result = await profRun(files, {
    cwd: io.cwd,
    out: typeof args.values.out === 'string' ? args.values.out : '.hotpath',
    reports: args.values.report !== false,
  });
  if (args.values.json === true)
    io.stdout.write(
      JSON.stringify(
        result.analyses.map((a) => a.statistics),
        null,
        2,
      ) + '\n',
    );
  else io.stdout.write(result.text);
  const s = styler(io);
  if (result.report) {
    const { formatRunSummary } = await import('../../run/run-summary.js');
    io.stderr.write('\n' + formatRunSummary(result.report, io.cwd, s, result.warnings));
  } else for (const w of result.warnings) io.stderr.write(`${s.yellow('warning')} ${w}\n`);
  return 0;
}

export const profCommand: Command = {
  name: 'prof',
  summary: "Read node --prof tick logs: --prof-process's figures, C++ named, and a run's report",
  usage: 'hotpath prof [options] <isolate-*.log...>',
  details: [
    'Prints what node --prof-process prints (Summary, JavaScript, C++, bottom-up profile), with',
    "the node binary's and shared libraries' C++ symbols resolved (nm), then writes a run",
    'directory: report.html (flame graph), report.md, prof.txt, and pprof/speedscope/folded exports.',
    'Several logs (isolates) are read at once, one thread each.',
    '',
    'Example:',
    '  node --prof server.js        (load it, stop it)',
    '  hotpath prof isolate-*.log',
  ].join('\n'),
  options,
  run: execute,
};
