// The contract every CLI command implements. A command declares its options as data
// (see options/option-spec.ts) and returns an exit code; only cli/main.ts calls process.exit.

import type { OptionSpec, ParsedArgs } from '../options/option-spec.js';
import type { CliIO } from './io.js';

export interface Command {
  name: string;
  /** One line for `hotpath --help`. */
  summary: string;
  /** Usage line(s), e.g. `hotpath load [options] <url>`. */
  usage: string;
  /** Extra help text printed after the options (examples, notes). */
  details?: string;
  options: readonly OptionSpec[];
  /**
   * The API the command calls checks its options where it is entered (load(), run()): the CLI
   * only converts argv's strings to their types, so one command line is validated once.
   */
  apiChecksOptions?: boolean;
  run(args: ParsedArgs, io: CliIO): Promise<number>;
}
