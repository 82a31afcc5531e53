// Keeps the readers of a run directory inside it. Run directories get shared and their files
// name other files (a profile's `file` in meta.json or telemetry): a name that is absolute,
// climbs out with `..`, or is a symbolic link to a place outside the directory would make
// `report` and `export` read, or write next to, files of the user's choosing. Such a name is
// HOTPATH_ERR_RUN_DIR_PATH; so is a run file that is not a regular file (a FIFO would hang the
// reader).

import { lstatSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { hotpathError } from '../errors.js';

function escapes(dir: string, file: string, from: string, why: string): Error {
  return hotpathError(
    'HOTPATH_ERR_RUN_DIR_PATH',
    `${from} names ${JSON.stringify(file)}, ${why}; hotpath reads and writes only inside the run directory ${dir}`,
    { details: { dir, file, from } },
  );
}

const inside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * The absolute path of `file`, a name read from the run directory's own files (`from` says
 * which), after checking that it stays inside `dir`: relative, without `..`, and, when it
 * exists, neither a link out of the directory nor anything but a regular file.
 */
export function runDirPath(dir: string, file: string, from: string): string {
  if (file === '' || file.includes('\0')) throw escapes(dir, file, from, 'which is not a file name');
  if (isAbsolute(file) || /^[a-zA-Z]:|^[\\/]/.test(file)) throw escapes(dir, file, from, 'an absolute path');
  if (file.split(/[\\/]/).includes('..')) throw escapes(dir, file, from, 'a path that climbs out with ".."');
  const path = resolve(dir, file);
  if (!inside(dir, path)) throw escapes(dir, file, from, 'a path outside the directory');
  checkExisting(dir, path, file, from);
  return path;
}

/** `name` (a fixed file name of the run directory) checked like runDirPath: no link out, a regular file. */
export function runFilePath(dir: string, name: string): string {
  const path = join(dir, name);
  checkExisting(dir, path, name, 'the run directory');
  return path;
}

function checkExisting(dir: string, path: string, file: string, from: string): void {
  let link: boolean;
  try {
    link = lstatSync(path).isSymbolicLink();
  } catch {
    return; // absent: the caller says it is missing
  }
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    if (link) throw escapes(dir, file, from, 'a symbolic link that leads nowhere');
    return;
  }
  if (!inside(realpathSync(dir), real)) throw escapes(dir, file, from, `a symbolic link to ${real}`);
  if (!statSync(real).isFile()) throw escapes(dir, file, from, 'which is not a regular file');
}
