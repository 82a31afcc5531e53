#!/usr/bin/env node
// The `hotpath` executable. The only place that calls process.exit: once the command's
// output is flushed, so a stray handle can never keep the CLI alive.

import { runCli } from './cli.js';

function exit(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

runCli(process.argv.slice(2)).then(exit, (err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  exit(1);
});
