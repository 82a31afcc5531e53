// Tells a launcher (a process that only starts the app: tsx's CLI, npm, nodemon...) from an app
// that may still open a server of its own, from the `hello` both processes sent. The server a
// launcher's child opens is the app's: no reason to wait for the launcher to open one.

import { isAbsolute, resolve } from 'node:path';
import type { HelloMessage } from '../agent/protocol.js';

/**
 * Packages whose command only starts another Node process and serves nothing itself (package
 * managers, TypeScript runners, restarters). Matched as a `node_modules/<name>/` folder of the
 * parent's main script, which is where every install puts them (global, local, corepack's).
 */
export const LAUNCHER_PACKAGES = [
  'npm',
  'pnpm',
  'yarn',
  '@yarnpkg',
  'corepack',
  'tsx',
  'ts-node',
  'ts-node-dev',
  'nodemon',
  'node-dev',
  '@swc-node',
  'esno',
  'dotenv-cli',
  'cross-env',
  'concurrently',
] as const;

type Hello = Pick<HelloMessage, 'argv' | 'cwd'>;

const launcherPath = new RegExp(`[\\\\/]node_modules[\\\\/](${LAUNCHER_PACKAGES.map((p) => p.replace('/', '[\\\\/]')).join('|')})[\\\\/]`);

/**
 * True when `parent` only launched `child`: its main script belongs to a known launcher
 * package, or the script `child` runs is one of `parent`'s own arguments (`tsx app.ts` runs
 * app.ts in a child; so does any runner of that kind, known here or not).
 */
export function launched(parent: Hello, child: Hello): boolean {
  const script = parent.argv[1];
  if (script !== undefined && launcherPath.test(script)) return true;
  const childScript = child.argv[1];
  if (childScript === undefined || !isAbsolute(childScript)) return false;
  return parent.argv.slice(2).some((arg) => !arg.startsWith('-') && resolve(parent.cwd, arg) === childScript);
}
