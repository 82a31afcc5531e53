// Turns what the agent and the profile report (absolute paths, file:// URLs, V8 names) into
// a Culprit: the function's own name and a path relative to the target's working directory.

import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallSite } from '../../agent/protocol.js';
import type { Frame } from '../../profile/call-tree.js';
import type { Culprit } from '../finding.js';
import { ownerOf } from '../../profile/anonymous-names.js';
import { isAgentBundle } from '../../profile/classify-frame.js';

const ANONYMOUS = '(anonymous)';

/** A path or URL relative to cwd when it lies inside it; unchanged otherwise. */
export function relativeFile(file: string, cwd: string): string {
  let path = file;
  if (path.startsWith('file://')) {
    try {
      path = fileURLToPath(path);
    } catch {
      return file;
    }
  }
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

/** True when a call site points at the user's own code: not node internals, not node_modules. */
export function isAppSite(site: CallSite | undefined): site is CallSite {
  if (!site || site.file === '') return false;
  const f = site.file;
  // hotpath's agent wraps the app's listeners and callbacks: its frames sit on the app's stacks
  // (a stall's samples put half the stalled time in its request wrapper when run from a checkout).
  return !f.startsWith('node:') && !f.startsWith('internal/') && !/[\\/]node_modules[\\/]/.test(f) && !isAgentBundle(f);
}

/**
 * The app frame that made a call the agent's hooks saw: the first frame of the captured stack
 * outside node internals and node_modules (a client library is skipped to its caller); an
 * anonymous callback there (a Promise executor) is named by the named function right below it
 * in the same file, the one that created it. Followed, when the stack shows them, by the app
 * functions that called it, nearest first (each app frame of another function than the site's
 * and the previous one's): the code that awaits a helper's calls, say in a loop, then what
 * called that (a lock's or a pool's wrapper).
 */
export function appCallers(e: { site?: CallSite; stack?: CallSite[] }): CallSite[] {
  const stack = e.stack && e.stack.length > 0 ? e.stack : e.site ? [e.site] : [];
  let i = stack.findIndex((f) => isAppSite(f));
  if (i < 0) return [];
  const next = stack[i + 1];
  // An anonymous function named by the one it was written in ("(anonymous in f)") is skipped the same way.
  const anonymous = (name: string) => ownerOf(name) === ANONYMOUS;
  if (ownerOf(stack[i].function) !== stack[i].function || anonymous(stack[i].function)) {
    if (next && next.file === stack[i].file && !anonymous(next.function) && ownerOf(next.function) === next.function && isAppSite(next))
      i++;
  }
  const site = stack[i];
  const out = [site];
  for (const f of stack.slice(i + 1)) {
    if (isAppSite(f) && f.function !== site.function && f.function !== out[out.length - 1].function) out.push(f);
  }
  return out;
}

export function siteCulprit(site: CallSite, cwd: string): Culprit {
  return {
    function: site.function || ANONYMOUS,
    file: relativeFile(site.file, cwd),
    line: site.line,
    ...(site.column ? { column: site.column } : {}),
  };
}

export function frameCulprit(frame: Frame, cwd: string): Culprit {
  return {
    function: frame.name || ANONYMOUS,
    file: relativeFile(frame.file, cwd),
    line: frame.line,
    ...(frame.column ? { column: frame.column } : {}),
  };
}

/** `name (file:line)` for summaries. */
export function describeCulprit(c: Culprit): string {
  return `${c.function} (${c.file}${c.line > 0 ? `:${c.line}` : ''})`;
}
