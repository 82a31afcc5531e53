// Interns frames: turns V8 call frames (URL, 0-based line/column, name) into the model's
// Frames (classified, source-mapped, cwd-relative path, 1-based line/column), once per
// distinct call frame. The same function seen optimized and unoptimized has one callFrame
// key, so it gets one Frame.

import { isAbsolute, relative, sep } from 'node:path';
import type { Frame, FrameKind } from './call-tree.js';
import { classifyFrame, classifyPath, urlToPath, type ClassifyContext } from './classify-frame.js';
import type { SourceMapResolver } from './source-maps.js';

export interface RawCallFrame {
  functionName: string;
  url: string;
  scriptId?: string | number;
  lineNumber: number;
  columnNumber: number;
}

export interface FrameTableOptions extends ClassifyContext {
  /** Shared source-map cache; source maps are not applied without one. */
  resolver?: SourceMapResolver;
}

/** Where a frame's generated code lives, kept to look up source lines later. */
export interface GeneratedLocation {
  path: string;
  /**
   * A dependency's file: the frame keeps the file's own lines (source maps are applied to app
   * frames only), so its line ticks are not mapped either.
   */
  dependency?: boolean;
}

const transpiledExtensions = /\.(ts|mts|cts|tsx|jsx)$/;
/** Files whose executed code is not their text (a loader transformed them). */
const isTranspiledSource = (path: string) => transpiledExtensions.test(path);

const toPosix = (p: string) => (sep === '/' ? p : p.split(sep).join('/'));

export class FrameTable {
  readonly frames: Frame[] = [];
  /** For app frames and dependency files: the generated file, for line-level hints (inline JSON work). */
  readonly generated: (GeneratedLocation | undefined)[] = [];
  readonly #byRaw = new Map<string, number>();
  readonly #byFrame = new Map<string, number>();
  readonly #opts: FrameTableOptions;

  constructor(opts: FrameTableOptions) {
    this.#opts = opts;
    this.#add({ name: '(root)', file: '', line: 0, column: 0, kind: 'program' }, undefined);
  }

  /** The frame index of a V8 call frame. */
  intern(cf: RawCallFrame): number {
    const rawKey = `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}\u0000${cf.scriptId ?? ''}`;
    let idx = this.#byRaw.get(rawKey);
    if (idx === undefined) {
      idx = this.#resolve(cf);
      this.#byRaw.set(rawKey, idx);
    }
    return idx;
  }

  #add(frame: Frame, gen: GeneratedLocation | undefined): number {
    const key = `${frame.name}\u0000${frame.file}\u0000${frame.line}\u0000${frame.column}\u0000${frame.kind}`;
    let idx = this.#byFrame.get(key);
    if (idx === undefined) {
      idx = this.frames.length;
      this.frames.push(frame);
      this.generated.push(gen);
      this.#byFrame.set(key, idx);
    }
    return idx;
  }

  #resolve(cf: RawCallFrame): number {
    if (cf.functionName === '(root)' && cf.url === '') return 0;
    const kind = classifyFrame(cf.functionName, cf.url, String(cf.scriptId ?? ''), this.#opts);
    const name = cf.functionName === '' ? '(anonymous)' : cf.functionName;
    const line = cf.lineNumber >= 0 ? cf.lineNumber + 1 : 0;
    const column = cf.columnNumber >= 0 ? cf.columnNumber + 1 : 0;
    const path = kind === 'app' || kind === 'deps' || kind === 'agent' ? urlToPath(cf.url) : undefined;
    if (path === undefined) return this.#add({ name, file: kind === 'node-core' ? cf.url : '', line, column, kind }, undefined);
    const resolver = this.#opts.resolver;
    if (kind === 'app' && resolver) {
      const mapped = resolver.original(path, cf.lineNumber, cf.columnNumber);
      if (mapped) return this.#mapped(mapped.name ?? name, mapped.path, mapped.line, mapped.column, path);
      if (isTranspiledSource(path)) return this.#transpiled(name, path, line, column, resolver);
    }
    return this.#add(
      { name, file: this.#relative(path), line, column, kind },
      kind === 'app' ? { path } : kind === 'deps' ? { path, dependency: true } : undefined,
    );
  }

  /**
   * TypeScript run through a loader (tsx, ts-node, node --experimental-strip-types) executes
   * code transformed in memory: V8's line and column point into that code, not the file, and
   * no map is on disk (tsx emits whole modules on one line). Without a map the function's
   * declaration is looked up by name in the file; failing that the line is unknown (0),
   * because a wrong line is worse than none. Line-level hints are skipped for such files.
   */
  #transpiled(name: string, path: string, line: number, column: number, resolver: SourceMapResolver): number {
    const decl = resolver.declarationLine(path, name);
    const plausible = decl ?? (line > 1 ? line : 0);
    return this.#add(
      { name, file: this.#relative(path), line: plausible, column: decl ? 0 : plausible ? column : 0, kind: 'app' },
      undefined,
    );
  }

  /** A source-mapped frame is classified again by its original path (bundled node_modules become deps). */
  #mapped(name: string, original: string, line: number, column: number, generated: string): number {
    const kind: FrameKind = classifyPath(original, this.#opts);
    return this.#add({ name, file: this.#relative(original), line, column, kind }, kind === 'app' ? { path: generated } : undefined);
  }

  /** Relative to cwd when inside it (the culprit contract); absolute otherwise (no `../../`). */
  #relative(path: string): string {
    const cwd = this.#opts.cwd;
    if (sep === '/' && path.startsWith(cwd.endsWith('/') ? cwd : `${cwd}/`)) return path.slice(cwd.length + (cwd.endsWith('/') ? 0 : 1));
    const rel = relative(this.#opts.cwd, path);
    return rel.startsWith('..') || isAbsolute(rel) ? toPosix(path) : toPosix(rel);
  }
}
