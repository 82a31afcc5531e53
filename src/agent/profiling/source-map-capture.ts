// Source maps that exist only inside the target: a loader that compiles in memory (tsx, ts-node,
// @swc-node) hands V8 code with an inline `//# sourceMappingURL=data:...` that is nowhere on
// disk, so the CLI cannot map profile frames and call sites of `app.ts` back to its lines. At
// the end of the run (flush), after the profiles are written, the agent worker enables the
// Debugger domain on the main thread for a moment: V8 then reports every script it has parsed
// with its source map URL. The app's scripts (not node_modules, not node's own) that carry one
// are written to `sourcemaps-<pid>-<tid>.json` as { v, scripts: { url: sourceMapURL } }.
// Debugger.enable is never used while the load runs: it costs the target only at the end.
import { writeFile } from 'node:fs';
import { join } from 'node:path';
import type { Session } from 'node:inspector';
import { disconnect } from './inspector-profiler.js';

/** At most this many scripts and this much map text per run (a bundle's map can be large). */
export const MAX_SOURCE_MAPS = 500;
export const MAX_SOURCE_MAP_BYTES = 32 * 1024 * 1024;
/** A main thread still blocked at the end of the run cannot answer: the run's end does not wait longer. */
export const SOURCE_MAP_CAPTURE_TIMEOUT_MS = 1000;

interface ScriptParsed { url?: string; sourceMapURL?: string }

/** Scripts worth mapping: the app's own files, with a map. */
export function isAppScript(s: ScriptParsed): s is Required<ScriptParsed> {
  const url = s.url ?? '';
  return (s.sourceMapURL ?? '') !== '' && (url.startsWith('file://') || url.startsWith('/')) && !/[\\/]node_modules[\\/]/.test(url);
}

export function sourceMapFileName(pid: number, threadId: number): string {
  return `sourcemaps-${pid}-${threadId}.json`;
}

/**
 * Collects the app scripts' source map URLs through a new session to the main thread and
 * writes them to the run directory; calls `done` in every case (nothing to write, an error).
 */
export function captureSourceMaps(connect: () => Session, opts: { runDir: string; pid: number; threadId: number }, onDone: () => void): void {
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  const done = (): void => {
    if (finished) return;
    finished = true;
    if (timer !== undefined) clearTimeout(timer);
    onDone();
  };
  let session: Session;
  try {
    session = connect();
  } catch {
    return done();
  }
  timer = setTimeout(() => {
    disconnect(session);
    done();
  }, SOURCE_MAP_CAPTURE_TIMEOUT_MS);
  const scripts: Record<string, string> = {};
  let count = 0;
  let bytes = 0;
  session.on('Debugger.scriptParsed', (m: { params: ScriptParsed }) => {
    const s = m.params;
    if (!isAppScript(s) || count >= MAX_SOURCE_MAPS || bytes + s.sourceMapURL.length > MAX_SOURCE_MAP_BYTES) return;
    scripts[s.url] = s.sourceMapURL;
    count++;
    bytes += s.sourceMapURL.length;
  });
  const post = (method: string, then: () => void): void => {
    try {
      session.post(method, () => { if (!finished) then(); });
    } catch {
      done(); // Disconnected meanwhile (the timeout): nothing more to ask.
    }
  };
  // The already parsed scripts are reported before Debugger.enable answers.
  post('Debugger.enable', () => post('Debugger.disable', () => {
    disconnect(session);
    if (count === 0) return done();
    writeFile(join(opts.runDir, sourceMapFileName(opts.pid, opts.threadId)), JSON.stringify({ v: 1, scripts }), () => done());
  }));
}
