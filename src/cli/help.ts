// Help texts, generated from the command declarations.

import type { Command } from './command.js';
import { formatOptions, type OptionSpec } from '../options/option-spec.js';

export function commandHelp(cmd: Command): string {
  const help: OptionSpec = { key: 'help', flag: 'help', short: 'h', type: 'boolean', description: 'Show this help' };
  const parts = [`Usage: ${cmd.usage}`, '', cmd.summary, '', 'Options:', formatOptions([...cmd.options, help])];
  if (cmd.details) parts.push('', cmd.details.trimEnd());
  return parts.join('\n') + '\n';
}

export function mainHelp(commands: readonly Command[], version: string): string {
  const width = Math.max(...commands.map((c) => c.name.length), 4) + 4;
  return [
    `hotpath ${version}: a performance doctor for Node.js servers`,
    '',
    'Usage: hotpath <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Run `hotpath <command> --help` for the options of a command.',
    'Options: --version, --help, --debug (print stacks of errors)',
    '',
  ].join('\n');
}
