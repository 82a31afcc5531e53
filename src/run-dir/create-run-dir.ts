// Creates a fresh run directory `<out>/<timestamp>-<name>/`, named after the command so a
// listing of .hotpath/ reads like a history of what was run.

import { mkdir } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { hotpathError } from '../errors.js';
import { DIR_MODE } from './write-run-files.js';

/** The launcher words that say nothing about the app (`node`, `npm`, `run`, flags...). */
const noise = new Set(['node', 'nodejs', 'npm', 'npx', 'pnpm', 'yarn', 'bun', 'tsx', 'ts-node', 'run', 'exec', 'env', '--']);

/** A short, file-system-safe name for a command: `node src/server.js` → `server`, `npm start` → `start`. */
export function runName(command: readonly string[]): string {
  if (command.length === 1 && /^https?:\/\//.test(command[0]) && URL.canParse(command[0])) return safe(new URL(command[0]).host);
  const script = [...command].reverse().find((w) => /\.[cm]?[jt]sx?$/.test(w) && !w.startsWith('-'));
  const word =
    script ?? command.find((w, i) => i > 0 && !w.startsWith('-') && !noise.has(w)) ?? command.find((w) => !w.startsWith('-')) ?? 'run';
  return safe(basename(word, extname(word)));
}

function safe(name: string): string {
  return (name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'run').slice(0, 40);
}

/** `20261122-031502` in local time: sorts by time and reads at a glance. */
export function runTimestamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** Creates the directory and returns its absolute path; adds `-2`, `-3`... when the name is taken. */
export async function createRunDir(outDir: string, command: readonly string[], now = new Date()): Promise<string> {
  return createNamedDir(outDir, runName(command), now);
}

/** The same for a directory named `<timestamp>-<name>` (an experiment's own directory: `vary-server`). */
export async function createNamedDir(outDir: string, name: string, now = new Date()): Promise<string> {
  const root = resolve(outDir);
  try {
    await mkdir(root, { recursive: true });
  } catch (err) {
    throw hotpathError('HOTPATH_ERR_OUT_DIR', `Cannot create the output directory ${root}: ${(err as Error).message}`, {
      cause: err,
      details: { out: root },
    });
  }
  const stem = `${runTimestamp(now)}-${name}`;
  for (let i = 1; ; i++) {
    const dir = resolve(root, i === 1 ? stem : `${stem}-${i}`);
    try {
      // 0700: target.log holds the app's output, the profiles its code (docs/run-directory.md, Secrets).
      await mkdir(dir, { mode: DIR_MODE });
      return dir;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || i > 1000) {
        throw hotpathError('HOTPATH_ERR_OUT_DIR', `Cannot create a run directory in ${root}: ${(err as Error).message}`, {
          cause: err,
          details: { out: root },
        });
      }
    }
  }
}
