// Captures call sites cheaply: Error.captureStackTrace with a small stackTraceLimit and
// structured frames through a temporary Error.prepareStackTrace (restored at once, so source
// map support and user overrides are untouched). Frames in node internals and in the agent's
// own bundles are skipped; node_modules frames are kept (the analyzers decide).
import type { CallSite } from '../protocol.js';

/** Frames kept per stack (after skipping internals and the agent). */
export const STACK_FRAMES = 6;
/** Raw frames captured: wrappers and framework layers sit between the hook and the caller. */
const RAW_LIMIT = 16;
/**
 * Raw frames captured where a library's own frames are dropped before the caller's: undici's
 * request() reaches its `undici:request:create` channel 14-20 frames down (the dispatcher, the
 * pool, the client, the Request's constructor, the channel's publish).
 */
export const DEEP_RAW_LIMIT = 48;

const agentFiles = new Set<string>();

/** Whether a file is one of the agent's own bundles. */
export const isAgentFile = (file: string): boolean => agentFiles.has(file);

/** Registers a file whose frames are the agent's own (the bundle path). */
export function addAgentFile(file: string): void {
  agentFiles.add(file);
}

interface V8Frame {
  getFileName(): string | undefined | null;
  getFunctionName(): string | null;
  getMethodName(): string | null;
  getTypeName(): string | null;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getEnclosingLineNumber?(): number | null;
  getEnclosingColumnNumber?(): number | null;
}

const holder: { stack?: unknown } = {};

/** V8's structured frames above `skip` (exclusive), at most `limit`. */
function rawFrames(skip: Function, limit: number): V8Frame[] {
  const prevLimit = Error.stackTraceLimit;
  const prevPrepare = Error.prepareStackTrace;
  try {
    Error.stackTraceLimit = limit;
    Error.prepareStackTrace = (_err, cs) => cs;
    Error.captureStackTrace(holder, skip);
    return (holder.stack as V8Frame[] | undefined) ?? [];
  } catch {
    return [];
  } finally {
    Error.stackTraceLimit = prevLimit;
    Error.prepareStackTrace = prevPrepare;
    holder.stack = undefined;
  }
}

/**
 * The stack above `skip` (exclusive), first frame = the call site; empty when none is outside internals.
 * `dropLeading`: frames of the hooked library itself, dropped until the first that is not (searched
 * DEEP_RAW_LIMIT frames deep), so the stack kept is its caller's.
 */
export function captureStack(skip: Function, dropLeading?: (file: string) => boolean): CallSite[] {
  const out: CallSite[] = [];
  for (const f of rawFrames(skip, dropLeading ? DEEP_RAW_LIMIT : RAW_LIMIT)) {
    const file = f.getFileName();
    if (!file || file.startsWith('node:') || agentFiles.has(file) || (!file.includes('/') && !file.includes('\\'))) continue;
    if (out.length === 0 && dropLeading?.(file)) continue;
    const site: CallSite = { function: functionName(f), file, line: f.getLineNumber() ?? 0, column: f.getColumnNumber() ?? 0 };
    const functionLine = f.getEnclosingLineNumber?.();
    const functionColumn = f.getEnclosingColumnNumber?.();
    if (typeof functionLine === 'number' && typeof functionColumn === 'number' && functionLine > 0) {
      site.functionLine = functionLine;
      site.functionColumn = functionColumn;
    }
    out.push(site);
    if (out.length >= STACK_FRAMES) break;
  }
  return out;
}

/** Whether the function that called `skip` is node's own (`node:…`), not the app's or a module's. */
export function calledByNode(skip: Function): boolean {
  return rawFrames(skip, 1)[0]?.getFileName()?.startsWith('node:') === true;
}

function functionName(f: V8Frame): string {
  const fn = f.getFunctionName();
  if (fn) return fn;
  const method = f.getMethodName();
  if (method) return `${f.getTypeName() ?? ''}.${method}`.replace(/^\./, '');
  return '(anonymous)';
}

/** A compact key for a site. */
export function siteKey(site: CallSite | undefined): string {
  return site === undefined ? '?' : `${site.file}:${site.line}:${site.column}`;
}

/** The file names of the `limit` frames above `skip` (exclusive), node internals included. */
export function callerFiles(skip: Function, limit: number): string[] {
  return rawFrames(skip, limit).map((f) => f.getFileName() ?? '');
}
