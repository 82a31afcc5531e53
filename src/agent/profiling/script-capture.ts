// What V8 knows of the app's scripts, asked at the end of the run (flush), after the profiles
// are written, through one new session to the main thread:
// - source maps that exist only inside the target: a loader that compiles in memory (tsx,
//   ts-node, @swc-node) hands V8 code with an inline `//# sourceMappingURL=data:...` that is
//   nowhere on disk, so the CLI cannot map profile frames and call sites of `app.ts` back to
//   its lines. Enabling the Debugger domain makes V8 report every script it has parsed with its
//   source map URL; the app's scripts (not node_modules, not node's own) that carry one are
//   written to `sourcemaps-<pid>-<tid>.json` as { v, scripts: { url: sourceMapURL } };
// - the function ranges of the scripts the CPU profile sampled (see function-ranges.ts), to
//   `functions-<pid>-<tid>.json` as { v, scripts: { url: rows } };
// - the call counts of the window call-counts.ts read during the load, in lines, to
//   `calls-<pid>-<tid>.json` as { v, pid, threadId, start, end, scripts: { url: rows } } (each
//   row's last field the calls made in the window).
// Debugger.enable is never used while the load runs: it costs the target only at the end.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Session } from 'node:inspector';
import { coverageHeld, endProfilerSession } from './coverage-hold.js';
import { functionRangesFileName, functionRows, type CoverageFunction, type FunctionRangeRow } from './function-ranges.js';
import type { CallWindow } from './call-counts.js';
import { withSpareFd, writeFileSpared } from '../fd-reserve.js';

/** At most this many scripts and this much map text per run (a bundle's map can be large). */
export const MAX_SOURCE_MAPS = 500;
export const MAX_SOURCE_MAP_BYTES = 32 * 1024 * 1024;
/** At most this many scripts' text is read for function ranges, and this much of it. */
export const MAX_RANGE_SCRIPTS = 300;
export const MAX_RANGE_SOURCE_BYTES = 32 * 1024 * 1024;
/** A main thread still blocked at the end of the run cannot answer: the run's end does not wait longer. */
export const SCRIPT_CAPTURE_TIMEOUT_MS = 1000;

interface ScriptParsed {
  scriptId?: string;
  url?: string;
  sourceMapURL?: string;
}
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: CoverageFunction[];
}

/** Scripts worth mapping: the app's own files, with a map. */
export function isAppScript(s: ScriptParsed): s is Required<ScriptParsed> {
  const url = s.url ?? '';
  return (s.sourceMapURL ?? '') !== '' && (url.startsWith('file://') || url.startsWith('/')) && !/[\\/]node_modules[\\/]/.test(url);
}

export function sourceMapFileName(pid: number, threadId: number): string {
  return `sourcemaps-${pid}-${threadId}.json`;
}

export interface ScriptCaptureOptions {
  runDir: string;
  pid: number;
  threadId: number;
  /** Script ids the CPU profiles sampled (function-ranges.ts profiledScripts); none: no ranges asked. */
  profiledScripts: ReadonlySet<string>;
  /** The call counts of a window of the load (call-counts.ts), written as `calls-<pid>-<tid>.json`. */
  callWindow?: CallWindow;
}

export function callCountsFileName(pid: number, threadId: number): string {
  return `calls-${pid}-${threadId}.json`;
}

/**
 * Captures the app scripts' source map URLs and the profiled scripts' function ranges through a
 * new session to the main thread and writes them to the run directory; calls `onDone` once in
 * every case (nothing to write, an error, the timeout).
 */
export function captureScripts(connect: () => Session, opts: ScriptCaptureOptions, onDone: () => void): void {
  // Done once the session's work is over (answered, failed or timed out) and the files are written.
  let sessionOver = false;
  let finished = false;
  let writes = 0;
  let timer: NodeJS.Timeout | undefined;
  const maybeDone = (): void => {
    if (finished || !sessionOver || writes > 0) return;
    finished = true;
    if (timer !== undefined) clearTimeout(timer);
    onDone();
  };
  const over = (): void => {
    sessionOver = true;
    maybeDone();
  };
  const write = (file: string, data: unknown): void => {
    writes++;
    writeFileSpared(join(opts.runDir, file), JSON.stringify(data), () => {
      writes--;
      maybeDone();
    });
  };
  // Call counts of plain JavaScript files are put in lines from the files themselves, written
  // at once: an app that compiled tens of thousands of scripts at run time (`new Function`) makes
  // Debugger.enable report each of them and outlast SCRIPT_CAPTURE_TIMEOUT_MS. The others (a
  // loader's transpiled code) wait for V8's text of the script, below.
  const window = opts.callWindow;
  const counted: Record<string, FunctionRangeRow[]> = {};
  const countedFromV8 = new Set<string>();
  const writeCalls = (): void => {
    if (window && Object.keys(counted).length > 0) {
      write(callCountsFileName(opts.pid, opts.threadId), {
        v: 1,
        pid: opts.pid,
        threadId: opts.threadId,
        start: window.start,
        end: window.end,
        scripts: counted,
      });
    }
  };
  for (const [id, c] of window?.scripts ?? []) {
    const source = plainSource(c.url);
    if (source === undefined) countedFromV8.add(id);
    else counted[c.url] = functionRows(c.functions, source);
  }
  if (countedFromV8.size === 0) writeCalls();
  let session: Session;
  try {
    session = connect();
  } catch {
    return over();
  }
  timer = setTimeout(() => {
    endProfilerSession(session);
    over();
  }, SCRIPT_CAPTURE_TIMEOUT_MS);
  const maps: Record<string, string> = {};
  let mapCount = 0;
  let mapBytes = 0;
  // The URL of every profiled or asked-for script by its id: V8's best-effort coverage leaves out
  // scripts whose functions a full GC emptied (a handler that ran once and left its requests
  // hanging), and the analysis still needs the handler's file (functions file's `urls`).
  const urls: Record<string, string> = {};
  session.on('Debugger.scriptParsed', (m: { params: ScriptParsed }) => {
    const s = m.params;
    if (s.scriptId !== undefined && s.url && opts.profiledScripts.has(String(s.scriptId))) urls[String(s.scriptId)] = s.url;
    if (!isAppScript(s) || mapCount >= MAX_SOURCE_MAPS || mapBytes + s.sourceMapURL.length > MAX_SOURCE_MAP_BYTES) return;
    maps[s.url] = s.sourceMapURL;
    mapCount++;
    mapBytes += s.sourceMapURL.length;
  });
  const post = (method: string, params: object | undefined, then: (err: Error | null, result?: unknown) => void): void => {
    try {
      session.post(method, params, (err, result) => {
        if (!sessionOver) then(err, result);
      });
    } catch {
      over(); // Disconnected meanwhile (the timeout): nothing more to ask.
    }
  };
  const end = (): void =>
    post('Debugger.disable', undefined, () => {
      endProfilerSession(session);
      over();
    });
  // Profiler.disable would end a call-count window's counting (coverage-hold.ts): then the session's deferred end disables it.
  const disableProfiler = (): void => (coverageHeld() ? end() : post('Profiler.disable', undefined, end));
  // The already parsed scripts are reported before Debugger.enable answers.
  post('Debugger.enable', undefined, () => {
    if (mapCount > 0) write(sourceMapFileName(opts.pid, opts.threadId), { v: 1, scripts: maps });
    if (opts.profiledScripts.size === 0 && countedFromV8.size === 0) return end();
    post('Profiler.enable', undefined, () =>
      post('Profiler.getBestEffortCoverage', undefined, (err, result) => {
        const coverage = err
          ? []
          : ((result as { result?: ScriptCoverage[] } | undefined)?.result ?? [])
              .filter((s) => opts.profiledScripts.has(String(s.scriptId)))
              .slice(0, MAX_RANGE_SCRIPTS);
        // Sources to read: the profiled scripts', then those with call counts (each read once).
        const ids = [...new Set([...coverage.map((s) => String(s.scriptId)), ...countedFromV8])].slice(0, MAX_RANGE_SCRIPTS);
        const writeRanges = (scripts: Record<string, FunctionRangeRow[]>): void => {
          if (Object.keys(scripts).length > 0 || Object.keys(urls).length > 0)
            write(functionRangesFileName(opts.pid, opts.threadId), { v: 1, scripts, urls });
        };
        if (ids.length === 0) {
          writeRanges({});
          return disableProfiler();
        }
        const byId = new Map(coverage.map((s) => [String(s.scriptId), s]));
        const scripts: Record<string, FunctionRangeRow[]> = {};
        let bytes = 0;
        const next = (i: number): void => {
          if (i >= ids.length || bytes >= MAX_RANGE_SOURCE_BYTES) {
            writeRanges(scripts);
            if (countedFromV8.size > 0) writeCalls();
            return disableProfiler();
          }
          const id = ids[i];
          post('Debugger.getScriptSource', { scriptId: id }, (e, r) => {
            const source = (r as { scriptSource?: string } | undefined)?.scriptSource;
            if (!e && typeof source === 'string') {
              bytes += source.length;
              const s = byId.get(id);
              if (s) scripts[s.url] = functionRows(s.functions, source);
              const c = countedFromV8.has(id) ? window?.scripts.get(id) : undefined;
              if (c) counted[c.url] = functionRows(c.functions, source);
            }
            next(i + 1);
          });
        };
        next(0);
      }),
    );
  });
}

/**
 * The text of a plain JavaScript file as V8 compiled it: node compiles CommonJS and ES modules
 * from the file's own text, so V8's offsets are the file's. Undefined for anything else (a `.ts`
 * file a loader transpiled, a URL that is not a file) or a file that cannot be read.
 */
function plainSource(url: string): string | undefined {
  if (!/\.(?:js|mjs|cjs)$/.test(url)) return undefined;
  try {
    const text = withSpareFd(() => readFileSync(url.startsWith('file://') ? fileURLToPath(url) : url, 'utf8'));
    // CommonJS compiles the text without its byte order mark.
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    return undefined;
  }
}
