// Classifies a V8 call frame into a FrameKind by its URL and name (see docs/profile-model.md).
// Measured on Node 20, 22 and 24: user code has a file:// URL; core has `node:` URLs; C++
// bindings (base64Slice, utf8Write, compileFunction) and V8's RegExp code have no URL and
// scriptId "0"; the special nodes are (root), (program), (idle) and (garbage collector).

import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameKind } from './call-tree.js';

const specialKinds: Record<string, FrameKind> = {
  '(root)': 'program',
  '(program)': 'program',
  '(idle)': 'idle',
  '(garbage collector)': 'gc',
};

/** The suffix of a kernel frame's name, as perf-script.ts writes it (`tcp_sendmsg [kernel]`). */
export const KERNEL_SUFFIX = ' [kernel]';

/** V8 code without a script: the regexp engine, accessors and builtins named like `Array.prototype.sort`. */
const v8BuiltinName = /^(RegExp: |(get|set) [\w$]+$|[A-Z][\w$]*\.(prototype\.)?[\w$]+$)/;

/** The special node's kind, or undefined for ordinary frames. */
export function specialKind(functionName: string, url: string): FrameKind | undefined {
  if (url !== '') return undefined;
  // The heap profiler names allocations made outside JS by VM state: (EXTERNAL), (V8 API), (PARSER)...
  return specialKinds[functionName] ?? (/^\([A-Z][A-Z0-9_ ]*\)$/.test(functionName) ? 'program' : undefined);
}

/** Turns a frame URL into an absolute path, or undefined when it is not a file. */
export function urlToPath(url: string): string | undefined {
  // Fast path for the common case (no escapes): a profile can hold thousands of frames.
  if (url.startsWith('file:///') && !url.includes('%') && sep === '/') return url.slice(7);
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(url) ? url : undefined;
}

/** True for Node's own modules: `node:…` (and the bare `internal/…` of old releases). */
export function isNodeCoreUrl(url: string): boolean {
  return url.startsWith('node:') || url.startsWith('internal/');
}

export interface ClassifyContext {
  cwd: string;
  /** Extra directories whose files count as app code (monorepo packages outside cwd). */
  appRoots?: readonly string[];
}

function isUnder(path: string, root: string): boolean {
  if (path.startsWith(root.endsWith(sep) ? root : root + sep)) return true;
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * hotpath's own agent bundles, wherever hotpath is installed (a checkout, node_modules/hotpath,
 * a global install): the profiler's overhead, never the app's code nor its dependencies.
 */
const agentBundle = /[\\/]dist[\\/]agent[\\/](hotpath-agent|agent-core|agent-worker)\.cjs$/;

/** Whether a path (or file URL) is one of hotpath's own agent bundles. */
export function isAgentBundle(path: string): boolean {
  return agentBundle.test(path);
}

/** agent = hotpath's bundles; app = under cwd (or an app root) and outside node_modules; deps = node_modules or elsewhere. */
export function classifyPath(path: string, ctx: ClassifyContext): FrameKind {
  if (agentBundle.test(path)) return 'agent';
  if (path.includes(`${sep}node_modules${sep}`) || path.includes('/node_modules/')) return 'deps';
  if (isUnder(path, ctx.cwd)) return 'app';
  return ctx.appRoots?.some((r) => isUnder(path, r)) ? 'app' : 'deps';
}

/** Kind of a frame from its V8 URL and name (before source maps). */
export function classifyFrame(functionName: string, url: string, scriptId: string, ctx: ClassifyContext): FrameKind {
  const special = specialKind(functionName, url);
  if (special) return special;
  if (url === '') {
    if (v8BuiltinName.test(functionName)) return 'v8-builtin';
    // perf's kernel frames (`hotpath run --native`, `hotpath import`): perf-script.ts names them so.
    if (functionName.endsWith(KERNEL_SUFFIX)) return 'kernel';
    // A script without a URL is eval'd or `new Function` code (compiled serializers, validators).
    return scriptId !== '0' && scriptId !== '' ? 'deps' : 'native';
  }
  if (isNodeCoreUrl(url)) return 'node-core';
  const path = urlToPath(url);
  return path === undefined ? 'deps' : classifyPath(path, ctx);
}
