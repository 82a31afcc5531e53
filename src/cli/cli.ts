// Dispatches argv to a command and turns errors into messages and exit codes.
// Returns the exit code; it never exits the process itself (cli/main.ts does).

import { loadCommand, loadCommands } from './commands/index.js';
import type { Command } from './command.js';
import { commandHelp, mainHelp } from './help.js';
import { parseArgv } from '../options/option-spec.js';
import { processIO, styler, type CliIO } from './io.js';
import { hotpathError, isHotpathError } from '../errors.js';
import { hotpathVersion } from '../hotpath-version.js';

/** Exit codes: 0 success, 1 a failed run, 2 bad input (usage errors); `run` adds 3 (incomplete diagnosis) and 130 (interrupted). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * Bad input (exit 2): the command line, and the input files it names, refused before anything
 * starts (docs/errors.md). Everything else that fails is a failed run (exit 1).
 */
const usageCodes = new Set([
  'HOTPATH_ERR_UNKNOWN_COMMAND',
  'HOTPATH_ERR_UNKNOWN_OPTION',
  'HOTPATH_ERR_INVALID_OPTION',
  'HOTPATH_ERR_MISSING_ARGUMENT',
  'HOTPATH_ERR_INVALID_URL',
  'HOTPATH_ERR_BODY_FILE',
  'HOTPATH_ERR_SCENARIO',
]);

/**
 * Runs one command line. `commands` replaces hotpath's own commands (tests); without it only
 * the named command's module is loaded (all of them for the help that lists them).
 */
export async function runCli(argv: readonly string[], io: CliIO = processIO(), commands?: readonly Command[]): Promise<number> {
  const all = async (): Promise<readonly Command[]> => commands ?? (await loadCommands());
  const debug = argv.includes('--debug');
  const args = argv.filter((a, i) => !(a === '--debug' && !argv.slice(0, i).includes('--')));
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stderr.write(mainHelp(await all(), hotpathVersion()));
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${hotpathVersion()}\n`);
    return EXIT_OK;
  }
  const cmd = commands ? commands.find((c) => c.name === name) : await loadCommand(name);
  try {
    if (!cmd) throw hotpathError('HOTPATH_ERR_UNKNOWN_COMMAND', `Unknown command "${name}"`, { showUsage: true });
    const parsed = parseArgv(cmd.options, rest, { resolve: !cmd.apiChecksOptions });
    if (parsed.help) {
      io.stderr.write(commandHelp(cmd));
      return EXIT_OK;
    }
    return await cmd.run(parsed, io);
  } catch (err) {
    return reportError(err, io, cmd, cmd ? [] : await all(), debug);
  }
}

function reportError(err: unknown, io: CliIO, cmd: Command | undefined, commands: readonly Command[], debug: boolean): number {
  const s = styler(io);
  if (isHotpathError(err)) {
    io.stderr.write(`${s.red('error')} ${s.bold(err.code)}: ${err.message}\n`);
    if ((err as { showUsage?: boolean }).showUsage) {
      io.stderr.write('\n' + (cmd ? commandHelp(cmd) : mainHelp(commands, hotpathVersion())));
    }
    if (debug && err instanceof Error) io.stderr.write(`${err.stack}\n`);
    return usageCodes.has(err.code) || (err as { showUsage?: boolean }).showUsage ? EXIT_USAGE : EXIT_FAILURE;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  io.stderr.write(`${s.red('error')} ${e.message}\n`);
  io.stderr.write(debug ? `${e.stack}\n` : 'This is a bug in hotpath; run again with --debug for the stack.\n');
  return EXIT_FAILURE;
}
