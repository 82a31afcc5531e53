// Writes files so that readers never see half of one, a set of files is replaced together, and
// a symbolic link planted under a file's name (in a shared run directory) is replaced rather
// than written through: each file goes to a fresh temporary name beside it (created
// exclusively, so no link is followed), then all are renamed over their targets.

import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';

export interface FileToWrite {
  path: string;
  data: string | Uint8Array;
}

/** Writes every file or, when one cannot be written, none of them (the temporary files are removed). */
export async function writeFilesAtomically(files: readonly FileToWrite[]): Promise<void> {
  const suffix = `.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const written: string[] = [];
  try {
    for (const f of files) {
      await writeFile(f.path + suffix, f.data, { flag: 'wx' });
      written.push(f.path + suffix);
    }
  } catch (err) {
    await Promise.all(written.map((tmp) => rm(tmp, { force: true })));
    throw err;
  }
  for (const f of files) await rename(f.path + suffix, f.path);
}
