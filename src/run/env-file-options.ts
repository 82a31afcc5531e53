// The NODE_OPTIONS a `node --env-file=.env app.js` command gets from its env files. Node reads
// NODE_OPTIONS from the file, but a variable already in the environment wins over the file's,
// and hotpath always puts NODE_OPTIONS in the target's environment (the agent's --require): the
// user's options from .env (their own preload, --max-old-space-size) would silently be dropped.
// When hotpath's caller has no NODE_OPTIONS of its own, the file's are read here and kept after
// the agent's, as Node would have applied them. Only a node command given directly is read: a
// wrapper's (`npm start` running `node --env-file=.env`) options are out of sight.

import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import * as util from 'node:util';

/** node's options that take their value as the next argument (the others are flags or `--x=value`). */
const VALUE_OPTIONS = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '-C',
  '--conditions',
  '--input-type',
  '--env-file',
  '--env-file-if-exists',
  '--watch-path',
  '--title',
  '--inspect-port',
  '--debug-port',
  '--disable-warning',
  '--stack-trace-limit',
]);
const ENV_FILE_OPTIONS = new Set(['--env-file', '--env-file-if-exists']);

/** The command runs node itself (not a wrapper): by its file name, or hotpath's own binary. */
export function isNodeCommand(file: string | undefined): boolean {
  if (file === undefined) return false;
  return file === process.execPath || /^node(\.exe)?$/.test(basename(file));
}

/** The env files node's own options name, in order, before the script (or `-e`). */
export function envFilesOf(command: readonly string[]): string[] {
  if (!isNodeCommand(command[0])) return [];
  const files: string[] = [];
  for (let i = 1; i < command.length; i++) {
    const arg = command[i];
    if (arg === '--' || !arg.startsWith('-')) break;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = eq > 0 ? arg.slice(eq + 1) : VALUE_OPTIONS.has(name) ? command[++i] : undefined;
    if (ENV_FILE_OPTIONS.has(name) && value !== undefined) files.push(value);
  }
  return files;
}

/** NODE_OPTIONS from the command's env files (the last file that sets it wins, as in node); undefined when none does. */
export function envFileNodeOptions(command: readonly string[], cwd: string): string | undefined {
  // util.parseEnv is node's own parser of these files (20.12+); older 20.x keeps the old behaviour.
  const parseEnv = (util as { parseEnv?: (content: string) => Record<string, string> }).parseEnv;
  if (typeof parseEnv !== 'function') return undefined;
  let options: string | undefined;
  for (const file of envFilesOf(command)) {
    let content: string;
    try {
      content = readFileSync(resolve(cwd, file), 'utf8');
    } catch {
      continue; // node itself says so (--env-file) or skips it (--env-file-if-exists)
    }
    const value = parseEnv(content).NODE_OPTIONS;
    if (value !== undefined) options = value;
  }
  return options;
}

/** The target's starting environment: NODE_OPTIONS from the command's env files when the caller has none. */
export function withEnvFileNodeOptions(env: NodeJS.ProcessEnv, command: readonly string[], cwd: string): NodeJS.ProcessEnv {
  if (env.NODE_OPTIONS !== undefined) return env; // the environment wins over the file, in node too
  const fromFiles = envFileNodeOptions(command, cwd);
  return fromFiles === undefined ? env : { ...env, NODE_OPTIONS: fromFiles };
}
