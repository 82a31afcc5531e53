// readRunFiles: the files of a run directory read back into RunData, as they are: the call
// sites as the agents reported them, the profiles listed but not parsed. profile/read-run.ts's
// readRunDir completes it (profiles checked, call sites source-mapped): the input of every
// analyzer and of `hotpath report`. Tolerant: a missing load.json, a missing profile or a
// truncated telemetry line becomes a readWarning; only a directory that holds no run is an
// error, and a file name that leads out of the directory (run-dir-path.ts).

import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { hotpathError } from '../errors.js';
import type { LoadResult } from '../load/load-result.js';
import type { CallSite, ProfileMessage } from '../agent/protocol.js';
import { readTelemetry, type TelemetryContents } from './read-telemetry.js';
import type { CallCounts, ProfileRef, RunData, ThreadTelemetry, ThreadThrows } from './run-data.js';
import type { FunctionRangeRow } from '../agent/profiling/function-ranges.js';
import { RUN_DIR_VERSION, RUN_FILES, type RunMeta } from './schema.js';
import { runDirPath, runFilePath } from './run-dir-path.js';
import { isLoadResult } from './load-shape.js';
import { arrayOf, bool, num, opt, shape, str, type Check } from './shape.js';

function notARunDir(dir: string, why: string): Error {
  return hotpathError('HOTPATH_ERR_RUN_DIR', `${dir} is not a hotpath run directory: ${why}`, { details: { dir } });
}

async function readJson(file: string): Promise<{ value?: unknown; error?: string }> {
  try {
    return { value: JSON.parse(await readFile(file, 'utf8')) as unknown };
  } catch (err) {
    return { error: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : (err as Error).message };
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A meta.json with every required field present (missing ones filled in, with a warning). */
function normalizeMeta(raw: unknown, dir: string, warnings: string[]): RunMeta {
  const m = isObject(raw) ? raw : {};
  if (m.version !== undefined && m.version !== RUN_DIR_VERSION) {
    warnings.push(`meta.json: run directory version ${String(m.version)}; this hotpath reads version ${RUN_DIR_VERSION}`);
  }
  const outcome = isShape(m.outcome, outcomeShape)
    ? (m.outcome as RunMeta['outcome'])
    : { status: 'failed' as const, reason: 'meta.json has no outcome' };
  const meta: RunMeta = {
    ...(m as Partial<RunMeta>),
    version: RUN_DIR_VERSION,
    hotpathVersion: typeof m.hotpathVersion === 'string' ? m.hotpathVersion : 'unknown',
    command: Array.isArray(m.command) ? m.command.map(String) : [],
    cwd: typeof m.cwd === 'string' ? m.cwd : dir,
    startedAt: typeof m.startedAt === 'number' ? m.startedAt : 0,
    phases: entries(m.phases, phaseShape, 'phases', warnings) as RunMeta['phases'],
    processes: entries(m.processes, processShape, 'processes', warnings) as RunMeta['processes'],
    outcome,
    options: isObject(m.options) ? m.options : {},
    profiles: Array.isArray(m.profiles) ? (m.profiles as RunMeta['profiles']) : [],
  };
  // Optional fields of the wrong type are dropped: readers trust the types of RunMeta.
  for (const [key, check] of Object.entries(optionalMetaFields)) {
    if ((meta as unknown as Record<string, unknown>)[key] !== undefined && !check((meta as unknown as Record<string, unknown>)[key])) {
      delete (meta as unknown as Record<string, unknown>)[key];
      warnings.push(`meta.json: "${key}" is malformed and was ignored`);
    }
  }
  return meta;
}

const isShape = (v: unknown, check: Check): boolean => check(v);
const outcomeShape = shape({
  status: str,
  exitCode: opt((v) => v === null || num(v)),
  signal: opt((v) => v === null || str(v)),
  reason: opt(str),
  code: opt(str),
  stderrTail: opt(arrayOf(str)),
  at: opt(num),
});
const phaseShape = shape({ phase: str, start: num, end: opt(num) });
const processShape = shape({
  pid: num,
  threadId: num,
  isTarget: bool,
  ppid: opt(num),
  argv: opt(arrayOf(str)),
  clusterWorkerId: opt(num),
  isClusterPrimary: opt(bool),
});
const optionalMetaFields: Record<string, Check> = {
  nodeVersion: str,
  endedAt: num,
  target: shape({ url: str, pid: opt(num), port: opt(num) }),
  warnings: arrayOf(str),
  spawnedPid: num,
  otherPorts: arrayOf(num),
  callCountWindow: shape({ from: num, until: num, requests: num, latest: opt(bool) }),
  throwWindow: shape({ from: num, answered: num, unanswered: num, until: opt(num) }),
};

/** The entries of an array field that have their shape; others are dropped with one warning. */
function entries(value: unknown, check: Check, field: string, warnings: string[]): unknown[] {
  if (!Array.isArray(value)) return [];
  const ok = value.filter(check);
  if (ok.length < value.length)
    warnings.push(
      `meta.json: ${value.length - ok.length} malformed "${field}" entr${value.length - ok.length === 1 ? 'y was' : 'ies were'} ignored`,
    );
  return ok;
}

/** Profiles named in meta.json and announced in telemetry, deduplicated, that exist on disk. */
function collectProfiles(dir: string, meta: RunMeta, announced: ProfileMessage[], warnings: string[]): ProfileRef[] {
  const byFile = new Map<string, ProfileRef>();
  const listed: { p: unknown; from: string }[] = [
    ...meta.profiles.map((p) => ({ p, from: RUN_FILES.meta })),
    ...announced.map((p) => ({ p, from: RUN_FILES.telemetry })),
  ];
  for (const { p, from } of listed) {
    if (!isObject(p) || typeof p.file !== 'string' || byFile.has(p.file)) continue;
    if (!isProfileEntry(p)) {
      warnings.push(`${from}: the profile entry for ${JSON.stringify(p.file)} lacks its kind, thread or window and was left out`);
      continue;
    }
    byFile.set(p.file, { kind: p.kind, pid: p.pid, threadId: p.threadId, path: runDirPath(dir, p.file, from), start: p.start, end: p.end });
  }
  return [...byFile.values()].filter((p) => {
    if (existsSync(p.path)) return true;
    warnings.push(`${p.kind} profile ${p.path} is listed but missing`);
    return false;
  });
}

const PROFILE_KINDS: ReadonlySet<unknown> = new Set(['cpu', 'heap', 'heap-retained']);

function isProfileEntry(p: Record<string, unknown>): p is RunMeta['profiles'][number] {
  return PROFILE_KINDS.has(p.kind) && [p.pid, p.threadId, p.start, p.end].every((x) => typeof x === 'number' && Number.isFinite(x));
}

/** The latest sample time over all threads, 0 without samples (a loop: a spread of 150k samples overflows the stack). */
function lastSampleTime(threads: ThreadTelemetry[]): number {
  let last = 0;
  for (const t of threads) for (const s of t.samples) if (s.t > last) last = s.t;
  return last;
}

function loadWindowOf(meta: RunMeta, load: LoadResult | undefined, threads: ThreadTelemetry[]): RunData['loadWindow'] {
  const phase = meta.phases.find((p) => p.phase === 'load');
  if (phase) {
    const lastSample = lastSampleTime(threads);
    const end = phase.end ?? load?.end ?? meta.endedAt ?? (lastSample || undefined);
    if (end !== undefined && end >= phase.start) return { start: phase.start, end };
  }
  if (load && load.end > load.start) return { start: load.start, end: load.end };
  return undefined;
}

/**
 * `listens` non-empty marks a target thread. Wrappers open servers of their own (tsx's IPC
 * pipe); meta.json knows which threads served the load, so the others' listens are dropped.
 */
function keepTargetListens(meta: RunMeta, threads: ThreadTelemetry[]): void {
  for (const t of threads) {
    const seen = meta.processes.find((p) => p.pid === t.pid && p.threadId === t.threadId);
    if (seen && !seen.isTarget) t.listens = [];
  }
}

/** The target's working directory: the listening agent's, else the one hotpath ran in. */
function targetCwd(meta: RunMeta, threads: ThreadTelemetry[]): string {
  return threads.find((t) => t.listens.length > 0 && t.hello)?.hello?.cwd ?? meta.cwd;
}

/** The run directory's files, read as they are (see profile/read-run.ts's readRunDir for the whole reading). */
export async function readRunFiles(dirArg: string): Promise<RunData> {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw notARunDir(dir, 'no such directory');
  const warnings: string[] = [];
  const metaFile = await readJson(runFilePath(dir, RUN_FILES.meta));
  const telemetryPath = runFilePath(dir, RUN_FILES.telemetry);
  const hasTelemetry = existsSync(telemetryPath);
  if (metaFile.error && !hasTelemetry) throw notARunDir(dir, `no ${RUN_FILES.meta} and no ${RUN_FILES.telemetry}`);
  if (metaFile.error)
    warnings.push(
      `meta.json is ${metaFile.error === 'missing' ? 'missing' : `unreadable (${metaFile.error})`}; the run's outline is incomplete`,
    );
  const meta = normalizeMeta(metaFile.value, dir, warnings);
  const telemetry: TelemetryContents = hasTelemetry ? await readTelemetry(telemetryPath) : { threads: [], profiles: [], warnings: [] };
  warnings.push(...telemetry.warnings);
  keepTargetListens(meta, telemetry.threads);
  const load = await readLoad(dir, meta, warnings);
  const sourceMaps = await readScriptsFiles(dir, SOURCE_MAPS_FILE, 'source maps', (v): v is string => typeof v === 'string', warnings);
  const functionRanges = await readScriptsFiles(dir, FUNCTIONS_FILE, 'function ranges', Array.isArray, warnings);
  const scriptUrls = functionRanges ? await readScriptUrls(dir) : undefined;
  const callCounts = await readCallCounts(dir, warnings);
  const throws = await readThrows(dir, warnings);
  const run: RunData = {
    dir,
    meta,
    load,
    threads: telemetry.threads,
    profiles: collectProfiles(dir, meta, telemetry.profiles, warnings),
    loadWindow: loadWindowOf(meta, load, telemetry.threads),
    cwd: targetCwd(meta, telemetry.threads),
    readWarnings: warnings,
    ...(sourceMaps ? { sourceMaps } : {}),
    ...(functionRanges ? { functionRanges: functionRanges as Record<string, FunctionRangeRow[]> } : {}),
    ...(scriptUrls ? { scriptUrls } : {}),
    ...(callCounts.length > 0 ? { callCounts } : {}),
    ...(throws.length > 0 ? { throws } : {}),
  };
  return run;
}

const SOURCE_MAPS_FILE = /^sourcemaps-\d+-\d+\.json$/;
const FUNCTIONS_FILE = /^functions-\d+-\d+\.json$/;

/**
 * What the agents captured per script at the end of the run (`sourcemaps-<pid>-<tid>.json`,
 * `functions-<pid>-<tid>.json`: { v, scripts: { url: value } }), merged over processes and
 * threads (cluster workers run the same files; the first file wins); undefined when none.
 */
async function readScriptsFiles<T>(
  dir: string,
  name: RegExp,
  what: string,
  valid: (v: unknown) => v is T,
  warnings: string[],
): Promise<Record<string, T> | undefined> {
  const files = readdirSync(dir)
    .filter((f) => name.test(f))
    .sort();
  if (files.length === 0) return undefined;
  const out: Record<string, T> = {};
  for (const f of files) {
    const { value, error } = await readJson(runFilePath(dir, f));
    const scripts = isObject(value) && isObject(value.scripts) ? value.scripts : undefined;
    if (!scripts) {
      warnings.push(`${f} is unreadable${error ? ` (${error})` : ''}; its ${what} are left out`);
      continue;
    }
    for (const [url, v] of Object.entries(scripts)) if (valid(v) && !Object.hasOwn(out, url)) out[url] = v;
  }
  return out;
}

/** The functions files' `urls` (script id → URL), keyed `<pid>:<threadId>:<scriptId>`; undefined when none. */
async function readScriptUrls(dir: string): Promise<Record<string, string> | undefined> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).filter((n) => FUNCTIONS_FILE.test(n))) {
    const [, pid, tid] = /^functions-(\d+)-(\d+)\.json$/.exec(f) ?? [];
    const { value } = await readJson(runFilePath(dir, f));
    const urls = isObject(value) && isObject(value.urls) ? value.urls : undefined;
    for (const [id, url] of Object.entries(urls ?? {})) if (typeof url === 'string') out[`${pid}:${tid}:${id}`] = url;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const CALLS_FILE = /^calls-\d+-\d+\.json$/;

const isRow = (r: unknown): r is FunctionRangeRow =>
  Array.isArray(r) && r.length === 6 && typeof r[0] === 'string' && r.slice(1).every((x) => typeof x === 'number' && Number.isFinite(x));

/**
 * The calls per function each agent counted in a window of the load (`calls-<pid>-<tid>.json`,
 * agent/profiling/call-counts.ts), one entry per thread; a malformed file is left out with a warning.
 */
async function readCallCounts(dir: string, warnings: string[]): Promise<CallCounts[]> {
  const out: CallCounts[] = [];
  for (const f of readdirSync(dir)
    .filter((n) => CALLS_FILE.test(n))
    .sort()) {
    const { value, error } = await readJson(runFilePath(dir, f));
    const ok =
      isObject(value) &&
      typeof value.pid === 'number' &&
      typeof value.threadId === 'number' &&
      typeof value.start === 'number' &&
      typeof value.end === 'number' &&
      value.end > value.start &&
      isObject(value.scripts);
    if (!ok) {
      warnings.push(`${f} is unreadable${error ? ` (${error})` : ''}; its call counts are left out`);
      continue;
    }
    const scripts: Record<string, FunctionRangeRow[]> = {};
    for (const [url, rows] of Object.entries(value.scripts as Record<string, unknown>)) {
      if (Array.isArray(rows)) scripts[url] = rows.filter(isRow);
    }
    out.push({
      pid: value.pid as number,
      threadId: value.threadId as number,
      start: value.start as number,
      end: value.end as number,
      scripts,
    });
  }
  return out;
}

const THROWS_FILE = /^throws-\d+-\d+\.json$/;

const isSite = (x: unknown): x is CallSite =>
  isObject(x) && typeof x.function === 'string' && typeof x.file === 'string' && typeof x.line === 'number' && typeof x.column === 'number';

/**
 * The exceptions each agent followed after a load that left requests unanswered
 * (`throws-<pid>-<tid>.json`, agent/profiling/throw-watch.ts); a malformed file is left out with a warning.
 */
async function readThrows(dir: string, warnings: string[]): Promise<ThreadThrows[]> {
  const out: ThreadThrows[] = [];
  for (const f of readdirSync(dir)
    .filter((n) => THROWS_FILE.test(n))
    .sort()) {
    const { value, error } = await readJson(runFilePath(dir, f));
    if (!isObject(value) || typeof value.pid !== 'number' || typeof value.threadId !== 'number' || !Array.isArray(value.groups)) {
      warnings.push(`${f} is unreadable${error ? ` (${error})` : ''}; the exceptions it followed are left out`);
      continue;
    }
    const groups = value.groups
      .filter((g): g is Record<string, unknown> => isObject(g) && typeof g.count === 'number' && Array.isArray(g.frames))
      .map((g) => ({
        count: g.count as number,
        uncaught: g.uncaught === true,
        frames: (g.frames as unknown[]).filter(isSite),
        ...(isSite(g.handledAt) ? { handledAt: g.handledAt } : {}),
      }));
    out.push({
      pid: value.pid,
      threadId: value.threadId,
      followed: typeof value.followed === 'number' ? value.followed : 0,
      ...(value.capped === true ? { capped: true } : {}),
      groups,
    });
  }
  return out;
}

async function readLoad(dir: string, meta: RunMeta, warnings: string[]): Promise<LoadResult | undefined> {
  const { value, error } = await readJson(runFilePath(dir, RUN_FILES.load));
  if (error === 'missing') {
    if (meta.phases.some((p) => p.phase === 'load')) warnings.push('load.json is missing: the load phase did not finish');
    return undefined;
  }
  if (error || !isLoadResult(value)) {
    warnings.push(
      `load.json is ${error ? `unreadable (${error})` : 'not a load result (fields missing or of the wrong type)'}; load results are left out`,
    );
    return undefined;
  }
  return value as unknown as LoadResult;
}
