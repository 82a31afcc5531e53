// Writers of the run directory's JSON files. Each write goes to a temporary file first and
// is renamed into place, so a reader never sees half a meta.json, even if hotpath dies.

import { renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hotpathError } from '../errors.js';
import type { LoadResult } from '../load/load-result.js';
import { RUN_FILES, type RunMeta } from './schema.js';

/** Run directories hold the app's output and what it answered: the owner's alone (0700 / 0600). */
export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** errno of a write that failed because of the directory or the disk, not of hotpath. */
const WRITE_ERRNOS = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EISDIR', 'ENOTDIR', 'ENOENT']);

/**
 * A failed write into a run directory as the coded HOTPATH_ERR_RUN_DIR (the directory is
 * read-only, gone, full...); any other error is returned as it is.
 */
export function runDirWriteError(dir: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !WRITE_ERRNOS.has(code)) return err;
  return hotpathError('HOTPATH_ERR_RUN_DIR', `Cannot write into the run directory ${dir}: ${(err as Error).message}`, {
    cause: err,
    details: { dir, errno: code },
  });
}

async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(value, null, 2) + '\n', { mode: FILE_MODE });
  await rename(tmp, file);
}

export function writeMeta(dir: string, meta: RunMeta): Promise<void> {
  return writeJsonAtomic(join(dir, RUN_FILES.meta), meta);
}

/** For the paths that cannot wait (a second Ctrl-C, process exit): same file, written synchronously. */
export function writeMetaSync(dir: string, meta: RunMeta): void {
  const file = join(dir, RUN_FILES.meta);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(meta, null, 2) + '\n', { mode: FILE_MODE });
  renameSync(tmp, file);
}

export function writeLoadResult(dir: string, load: LoadResult): Promise<void> {
  return writeJsonAtomic(join(dir, RUN_FILES.load), load);
}
