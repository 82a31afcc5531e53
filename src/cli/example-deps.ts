// The packages a bundled example needs (express, restify, fastify), for `hotpath demo` run from
// an installed hotpath. An example declares them in its own package.json. In the repository
// they resolve from its node_modules (dev dependencies); a user's install has none of them, so
// on first use the example is copied into hotpath's cache directory and they are installed
// there with npm, once, saying so on stderr. Later demos run from the cache at once.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hotpathError } from '../errors.js';
import { hotpathVersion } from '../hotpath-version.js';

/** Written last into a cached example: its presence means the install finished. */
const READY_MARK = '.hotpath-ready';

/** The dependencies an example's package.json declares (none when it has no package.json). */
export function exampleDependencies(dir: string): Record<string, string> {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return {};
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as { dependencies?: Record<string, string> };
  return pkg.dependencies ?? {};
}

/** The declared dependencies that do not resolve from the example's own directory. */
export function missingDependencies(dir: string): string[] {
  const req = createRequire(join(dir, 'package.json'));
  return Object.keys(exampleDependencies(dir)).filter((name) => {
    try {
      req.resolve(`${name}/package.json`);
      return false;
    } catch {
      try {
        req.resolve(name);
        return false;
      } catch {
        return true;
      }
    }
  });
}

/** hotpath's cache directory: $XDG_CACHE_HOME/hotpath, else ~/.cache/hotpath. */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'hotpath');
}

export interface ExampleDepsIO {
  env: NodeJS.ProcessEnv;
  /** For people: what is being installed, and npm's own output. */
  stderr: NodeJS.WritableStream;
}

/**
 * The directory to run example `name` from: its own when everything it needs resolves there,
 * else a cached copy with its dependencies installed (installed now on first use).
 */
export async function exampleRunDir(name: string, dir: string, io: ExampleDepsIO): Promise<string> {
  const missing = missingDependencies(dir);
  if (missing.length === 0) return dir;
  const target = join(cacheDir(io.env), 'examples', `${name}-${hotpathVersion()}`);
  if (existsSync(join(target, READY_MARK))) return target;
  const deps = exampleDependencies(dir);
  const list = missing.map((m) => `${m}@${deps[m]}`).join(', ');
  io.stderr.write(
    `hotpath demo: this example needs ${list}; installing ${missing.length === 1 ? 'it' : 'them'} once into ${target} (npm install)\n`,
  );
  // Installed beside the final place and renamed into it: an interrupted install leaves no half-ready example.
  const staging = `${target}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  cpSync(dir, staging, { recursive: true });
  try {
    await npmInstall(staging, io);
    writeFileSync(join(staging, READY_MARK), `${new Date().toISOString()}\n`);
    rmSync(target, { recursive: true, force: true });
    renameSync(staging, target);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw hotpathError(
      'HOTPATH_ERR_DEMO_SETUP',
      `Cannot install what the ${name} example needs (${list}) into ${target}: ${err instanceof Error ? err.message : String(err)}. ` +
        'Check the network and npm, or try an example without dependencies (hotpath demo healthy-http)',
      { cause: err, details: { example: name, missing, dir: target } },
    );
  }
  return target;
}

/** `npm install` of the example's package.json in `dir`; npm's output goes to stderr (stdout is for data). */
function npmInstall(dir: string, io: ExampleDepsIO): Promise<void> {
  // Under npx or an npm script, npm_execpath is the npm that runs us: use the same one.
  const npmCli = io.env.npm_execpath;
  const viaNode = npmCli !== undefined && /npm-cli\.js$/.test(npmCli);
  const file = viaNode ? process.execPath : process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = [
    ...(viaNode ? [npmCli] : []),
    'install',
    '--omit=dev',
    '--no-audit',
    '--no-fund',
    '--no-package-lock',
    '--prefer-offline',
    '--loglevel=error',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: dir,
      env: io.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32' && !viaNode,
    });
    child.stdout.pipe(io.stderr, { end: false });
    child.stderr.pipe(io.stderr, { end: false });
    child.on('error', (err: NodeJS.ErrnoException) => reject(new Error(err.code === 'ENOENT' ? 'npm was not found' : err.message)));
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`npm install exited with ${code ?? signal}`))));
  });
}
