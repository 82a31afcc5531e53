// The bytes of a run's profile file: every reader of a profile (readRunDir's check, the views
// of the analysis, report.html, the exports) reads it through here, under one policy
// (docs/run-directory.md, Reading a run directory back): a file that cannot be read is a coded
// error, HOTPATH_ERR_PROFILE, naming the file; the readers above decide what it costs them
// (readRunDir marks the profile unusable with a warning, the views leave it out, an export of
// that very file fails). Parsing is the profile model's (src/profile/cpu-profile.ts).

import { readFileSync } from 'node:fs';
import { hotpathError } from '../errors.js';

/** The text of the profile at `path` (read whole, synchronously: the analyzers are synchronous). */
export function readProfileFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw hotpathError('HOTPATH_ERR_PROFILE', `Cannot read the profile ${path}: ${(cause as Error).message}`, {
      cause,
      details: { file: path },
    });
  }
}
