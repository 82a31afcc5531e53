// `hotpath report <run-dir>`: read a run directory again, re-run the diagnosis, rewrite its
// reports and print the summary (`--json`: report.json on stdout). Useful after upgrading
// hotpath, or to look at a run made elsewhere.

import type { Command } from '../command.js';
import type { CliIO } from '../io.js';
import { styler } from '../io.js';
import type { OptionSpec, ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { writeReports } from '../../report/write-reports.js';
import { readRunDir } from '../../profile/read-run.js';
import { runDirWriteError } from '../../run-dir/write-run-files.js';
import { formatRunSummary } from '../../run/run-summary.js';
import { resolve } from 'node:path';

const options: readonly OptionSpec[] = [
  { key: 'json', flag: 'json', type: 'boolean', default: false, description: 'Print report.json on stdout' },
];

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  const [dirArg, ...extra] = args.positionals;
  if (dirArg === undefined) {
    throw hotpathError('HOTPATH_ERR_MISSING_ARGUMENT', 'Which run? e.g. hotpath report .hotpath/20261122-101500-server', {
      showUsage: true,
    });
  }
  if (extra.length > 0) {
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `hotpath report takes one run directory; got ${args.positionals.length}`, {
      showUsage: true,
    });
  }
  const dir = resolve(io.cwd, dirArg);
  const data = await readRunDir(dir);
  const s = styler(io);
  const report = await writeReports(dir, { run: data }).catch((err: unknown) => {
    throw runDirWriteError(dir, err);
  });
  io.stderr.write(formatRunSummary(report, io.cwd, s, [...(data.meta.warnings ?? []), ...data.readWarnings]));
  if (args.values.json === true) io.stdout.write(JSON.stringify(report, null, 2) + '\n');
  return 0;
}

export const reportCommand: Command = {
  name: 'report',
  summary: 'Diagnose a run directory again and rewrite its reports',
  usage: 'hotpath report [options] <run-dir>',
  options,
  run: execute,
};
