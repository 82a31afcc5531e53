// What a dead Node process printed about its death, read back from the last lines of its stderr
// (meta.json's `outcome.stderrTail`): the error and its stack for an uncaught exception or an
// unhandled rejection, V8's "FATAL ERROR" for a heap that ran out, nothing for process.exit().
// Node prints an uncaught error as
//
//   /srv/app/server.js:5                      <- where it was thrown (a path or a file:// URL)
//     if (n === 3000) throw new Error('boom');
//                     ^
//   Error: boom                               <- the error
//       at handler (/srv/app/server.js:5:25)  <- its stack, innermost first
//   Node.js v20.20.2
//
// and a rejection whose reason is no Error from node:internal/process/promises, at
// `triggerUncaughtException(err, true /* fromPromise */)`. Lines printed earlier (a log of a
// handled error with its own stack) come before: the last error block is the one that killed.

import type { CallSite } from '../../agent/protocol.js';

export type CrashKind = 'uncaught-exception' | 'unhandled-rejection' | 'out-of-memory' | 'fatal-error';

export interface CrashReport {
  kind: CrashKind;
  /** The error's first line (`TypeError: x is not a function`) or V8's fatal message. */
  error?: string;
  /** The stack printed under it, innermost first. */
  frames: CallSite[];
  /** The location Node printed above the source line: where it was thrown. */
  thrownAt?: { file: string; line: number };
}

/** V8 stack lines: `at fn (file:line:col)`, `at file:line:col`, `at async fn (...)`, `at new C (...)`. */
const FRAME = /^\s+at (?:(.+?) \((.+):(\d+):(\d+)\)|(.+):(\d+):(\d+))$/;
/** Node's header above the source line of an uncaught error: `/abs/file.js:12` or `file:///x.mjs:12`. */
const HEADER = /^((?:file:\/\/|\/|[A-Za-z]:\\|node:).+):(\d+)$/;
const FATAL = /FATAL ERROR: (.+)$/;
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit|Allocation failed/i;
const REJECTION = /fromPromise|ERR_UNHANDLED_REJECTION|UnhandledPromiseRejection|unhandled promise rejection/i;
const NODE_VERSION = /^Node\.js v\d/;

/** A V8 frame's function as written: `Server.<anonymous>` → `(anonymous)`, `async Foo.bar [as baz]` → `bar`. */
export function frameFunction(raw: string | undefined): string {
  if (raw === undefined) return '(anonymous)';
  const name = raw
    .replace(/ \[as [^\]]+\]$/, '')
    .replace(/^(?:async|new) /, '')
    .trim();
  const own = name.includes('.') && !name.endsWith('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
  return own === '' || own === '<anonymous>' ? '(anonymous)' : own;
}

export function parseFrame(line: string): CallSite | undefined {
  const m = FRAME.exec(line);
  if (!m) return undefined;
  const [file, l, c] = m[2] !== undefined ? [m[2], m[3], m[4]] : [m[5], m[6], m[7]];
  // `at eval (eval at f (file:1:2), <anonymous>:1:1)` and native frames name no file of the app.
  if (file.includes('(') || file === '<anonymous>') return undefined;
  return { function: frameFunction(m[1]), file, line: Number(l), column: Number(c) };
}

/** The crash the tail describes, or undefined when it shows none (a process.exit(), a signal). */
export function parseCrash(tail: readonly string[]): CrashReport | undefined {
  const fatal = tail.map((l) => FATAL.exec(l)).find((m) => m !== null);
  if (fatal) return { kind: OUT_OF_MEMORY.test(fatal[1]) ? 'out-of-memory' : 'fatal-error', error: fatal[1].trim(), frames: [] };
  // The last block: from the last header Node printed to "Node.js vNN"; without a header (an app
  // that printed the error itself), the last stack in the tail and the line above it.
  const end = tail.findLastIndex((l) => NODE_VERSION.test(l));
  const lines = end >= 0 ? tail.slice(0, end) : [...tail];
  const headerAt = lines.findLastIndex((l) => HEADER.test(l));
  const header = headerAt >= 0 ? HEADER.exec(lines[headerAt]) : null;
  const block = headerAt >= 0 ? lines.slice(headerAt) : lines.slice(lastStackStart(lines));
  const firstFrame = block.findIndex((l) => FRAME.test(l));
  const frames: CallSite[] = [];
  for (const l of firstFrame >= 0 ? block.slice(firstFrame) : []) {
    const f = parseFrame(l);
    if (f) frames.push(f);
    else if (!/^\s+at /.test(l)) break;
  }
  // Under the header: the source line and its caret, then the error's first line.
  const skip = headerAt < 0 ? 0 : /^\s*\^+\s*$/.test(block[2] ?? '') ? 3 : 1;
  const error = (firstFrame >= 0 ? block.slice(0, firstFrame) : block).slice(skip).find((l) => /^\S/.test(l) && /\w/.test(l));
  const thrownAt = header && !header[1].startsWith('node:') ? { file: header[1], line: Number(header[2]) } : undefined;
  if (header === null && (frames.length === 0 || error === undefined)) return undefined;
  return {
    kind: block.some((l) => REJECTION.test(l)) ? 'unhandled-rejection' : 'uncaught-exception',
    ...(error !== undefined ? { error: error.replace(/ \{$/, '').trim() } : {}),
    frames,
    ...(thrownAt ? { thrownAt } : {}),
  };
}

/** The index of the line above the last run of stack frames (its error), or the tail's length. */
function lastStackStart(lines: readonly string[]): number {
  let i = lines.findLastIndex((l) => FRAME.test(l));
  if (i < 0) return lines.length;
  while (i > 0 && /^\s+at /.test(lines[i - 1])) i--;
  return Math.max(0, i - 1);
}
