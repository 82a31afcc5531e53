// Creates the run directory and writes a first meta.json at once, so a run that never
// finishes (hotpath killed, machine rebooted) still leaves a directory that says so.

import { hotpathVersion } from '../hotpath-version.js';
import { createRunDir } from '../run-dir/create-run-dir.js';
import { RUN_DIR_VERSION, type RunMeta } from '../run-dir/schema.js';
import { runDirWriteError, writeMeta } from '../run-dir/write-run-files.js';
import type { ResolvedRunOptions } from './resolve-run-options.js';
import { redactBody, redactHeaders, redactUrl } from '../redact.js';

export async function startRunDir(o: ResolvedRunOptions): Promise<{ dir: string; meta: RunMeta }> {
  const command = o.url ? [redactUrl(o.url)] : o.command;
  const dir = await createRunDir(o.out, command);
  const { command: _command, cwd: _cwd, setupRequests: _setup, ...options } = o;
  const meta: RunMeta = {
    version: RUN_DIR_VERSION,
    hotpathVersion: hotpathVersion(),
    command,
    cwd: o.cwd,
    startedAt: Date.now(),
    phases: [],
    processes: [],
    // Overwritten when the run ends; stays only if hotpath never got that far.
    outcome: { status: 'failed', reason: 'The run did not finish: hotpath stopped before writing its results' },
    options: recordedOptions(options),
    profiles: [],
  };
  await writeMeta(dir, meta).catch((err: unknown) => {
    throw runDirWriteError(dir, err);
  });
  return { dir, meta };
}

/** The options as meta.json records them: credentials out (src/redact.ts has the rule). */
export function recordedOptions<O extends Pick<ResolvedRunOptions, 'url' | 'headers' | 'body' | 'redact'>>(o: O): O {
  return {
    ...o,
    ...(o.url !== undefined ? { url: redactUrl(o.url) } : {}),
    ...(o.headers !== undefined ? { headers: redactHeaders(o.headers, o.redact) } : {}),
    ...(o.body !== undefined ? { body: redactBody(o.body) } : {}),
  };
}
