// Writes files so that readers never see half of one, a set of files is replaced together, and
// a symbolic link planted under a file's name (in a shared run directory) is replaced rather
// than written through: each file goes to a fresh temporary name beside it (created
// exclusively, so no link is followed, and readable by its owner only, 0600, like everything
// in a run directory), then all are renamed over their targets.

import { randomBytes } from 'node:crypto';
import { lstat, rename, rm, writeFile } from 'node:fs/promises';

export interface FileToWrite {
  path: string;
  /** Chunks of text are written one after the other (a large export is never one string). */
  data: string | Uint8Array | Iterable<string>;
}

/** Writes every file or, when one cannot be written, none of them (the temporary files are removed). */
export async function writeFilesAtomically(files: readonly FileToWrite[]): Promise<void> {
  const suffix = `.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const written: string[] = [];
  try {
    // A rename over a directory would fail half-way through the set: refuse before writing.
    for (const f of files) {
      const st = await lstat(f.path).catch(() => undefined);
      if (st?.isDirectory()) throw Object.assign(new Error(`EISDIR: ${f.path} is a directory`), { code: 'EISDIR' });
    }
    for (const f of files) {
      await writeFile(f.path + suffix, f.data, { flag: 'wx', mode: 0o600 });
      written.push(f.path + suffix);
    }
  } catch (err) {
    await Promise.all(written.map((tmp) => rm(tmp, { force: true })));
    throw err;
  }
  for (const f of files) await rename(f.path + suffix, f.path);
}
