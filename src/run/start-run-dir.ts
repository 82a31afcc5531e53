// Creates the run directory and writes a first meta.json at once, so a run that never
// finishes (hotpath killed, machine rebooted) still leaves a directory that says so.

import { hotpathVersion } from './hotpath-version.js';
import { createRunDir } from '../run-dir/create-run-dir.js';
import { RUN_DIR_VERSION, type RunMeta } from '../run-dir/schema.js';
import { writeMeta } from '../run-dir/write-run-files.js';
import type { ResolvedRunOptions } from './resolve-run-options.js';

/** Run directories get shared and attached to tickets: credentials in headers stay out. */
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|x-api-key|x-auth-token)$/i;

export function redactHeaders(headers: RunOptionsHeaders): RunOptionsHeaders {
  if (headers === undefined) return undefined;
  const redact = (name: string, value: string) => (SECRET_HEADERS.test(name.trim()) ? '<redacted>' : value);
  if (Array.isArray(headers)) {
    return headers.map((h) => {
      const i = h.indexOf(':');
      return i === -1 ? h : `${h.slice(0, i)}: ${redact(h.slice(0, i), h.slice(i + 1).trim())}`;
    });
  }
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, redact(k, v)]));
}

type RunOptionsHeaders = ResolvedRunOptions['headers'];

export async function startRunDir(o: ResolvedRunOptions): Promise<{ dir: string; meta: RunMeta }> {
  const command = o.url ? [o.url] : o.command;
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
    options: { ...options, headers: redactHeaders(options.headers) },
    profiles: [],
  };
  await writeMeta(dir, meta);
  return { dir, meta };
}
