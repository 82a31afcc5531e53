// `hotpath demo`: the diagnosis on a known-bad server, with nothing to set up. Runs one of
// the bundled examples (default: the restify ETag listener leak) with its own load flags from
// examples/<name>/hotpath.json, exactly as `hotpath run ... -- node server.js` would. An
// example that needs a framework hotpath does not ship (restify, express, fastify) gets it
// installed once into a cache directory when run from an installed hotpath (example-deps.ts).

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from '../command.js';
import type { CliIO } from '../io.js';
import { styler } from '../io.js';
import { parseArgv, type OptionSpec, type ParsedArgs } from '../../options/option-spec.js';
import { hotpathError } from '../../errors.js';
import { exampleRunDir } from '../example-deps.js';
import { runCommand } from './run.js';

/** examples/ at the package root (dist/src/cli/commands → four levels up). */
export const examplesDir = fileURLToPath(new URL('../../../../examples/', import.meta.url));
export const DEFAULT_EXAMPLE = 'restify-etag-leak';

export interface ExampleConfig {
  /** `hotpath run` flags. */
  args: string[];
  /** Scenario file (relative to the example) sent once before load. */
  setup?: string;
}

export function listExamples(): string[] {
  if (!existsSync(examplesDir)) return [];
  return readdirSync(examplesDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(examplesDir, d.name, 'hotpath.json')))
    .map((d) => d.name)
    .sort();
}

export function readExampleConfig(name: string): ExampleConfig {
  const file = join(examplesDir, name, 'hotpath.json');
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  const obj = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const args = Array.isArray(obj.args) ? obj.args.filter((a): a is string => typeof a === 'string') : [];
  return { args, ...(typeof obj.setup === 'string' ? { setup: obj.setup } : {}) };
}

/** The full `hotpath run` argv for an example (run with the example's directory as cwd). */
export function exampleRunArgv(name: string, extra: readonly string[] = []): string[] {
  const config = readExampleConfig(name);
  return [...config.args, ...(config.setup ? ['--setup', config.setup] : []), ...extra, '--', process.execPath, 'server.js'];
}

const options: readonly OptionSpec[] = [
  {
    key: 'example',
    flag: 'example',
    type: 'string',
    default: DEFAULT_EXAMPLE,
    valueName: '<name>',
    description: 'Which bundled example to diagnose (see the list below)',
  },
  {
    key: 'out',
    flag: 'out',
    short: 'o',
    type: 'string',
    default: '.hotpath',
    valueName: '<dir>',
    description: 'Where to write the run directory (relative to the current directory)',
  },
  { key: 'json', flag: 'json', type: 'boolean', default: false, description: 'Print report.json on stdout' },
];

async function execute(args: ParsedArgs, io: CliIO): Promise<number> {
  // `hotpath demo <name>` and `hotpath demo --example <name>` are the same; both at once must agree.
  const [positional, ...surplus] = args.positionals;
  const flag = args.values.example as string | undefined;
  if (surplus.length > 0 || (positional !== undefined && flag !== undefined && flag !== DEFAULT_EXAMPLE && flag !== positional)) {
    throw hotpathError(
      'HOTPATH_ERR_INVALID_OPTION',
      `hotpath demo takes one example name; got ${[...args.positionals, ...(flag && flag !== DEFAULT_EXAMPLE ? [flag] : [])].join(', ')}`,
      { showUsage: true },
    );
  }
  const name = String(positional ?? flag ?? DEFAULT_EXAMPLE);
  const available = listExamples();
  if (!available.includes(name)) {
    throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `--example must be one of ${available.join(', ')}; got ${JSON.stringify(name)}`, {
      showUsage: true,
      details: { option: 'example', value: name },
    });
  }
  const s = styler(io);
  const dir = await exampleRunDir(name, join(examplesDir, name), io);
  io.stderr.write(`${s.bold('hotpath demo')}: ${name} (${dir})\n${s.dim(readme(dir))}\n\n`);
  const extra = ['--out', resolve(io.cwd, String(args.values.out)), ...(args.values.json === true ? ['--json'] : [])];
  const parsed = parseArgv(runCommand.options, exampleRunArgv(name, extra));
  // The examples listen on PORT (3000 without it): a port the system picks, so a demo never
  // fails on a port another server (or a PORT in the user's shell) already holds; hotpath reads
  // the port from the agent, as it does for any server.
  return runCommand.run(parsed, { ...io, cwd: dir, env: { ...io.env, PORT: '0' } });
}

/** The example README's paragraph, for context before the run starts. */
function readme(dir: string): string {
  const file = join(dir, 'README.md');
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .join('\n')
    .trim();
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Diagnose a bundled example server (a restify listener leak by default)',
  usage: 'hotpath demo [<name> | --example <name>]',
  get details() {
    return `Examples: ${listExamples().join(', ')}\n\nEach one is a small server in examples/<name>/ with a README; hotpath.json holds its load flags.`;
  },
  options,
  run: execute,
};
