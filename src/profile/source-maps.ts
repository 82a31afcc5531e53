// Maps generated positions (bundles, compiled TypeScript) back to the original file, line
// and function name with @jridgewell/trace-mapping. Reads `//# sourceMappingURL=` (inline
// `data:` URLs and map files) from the generated file; everything is cached per file, so a
// profile with 100k frames reads each script and map once.

import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';

/** A position in the original source. Line and column are 1-based. */
export interface OriginalPosition {
  path: string;
  line: number;
  column: number;
  /** The original name when the map records one. */
  name?: string;
}

interface ScriptInfo {
  lines: string[];
  /** The map, read on first use (undefined until then): a dependency's text is read for its lines alone. */
  map?: TraceMap | null;
  mapUrl?: string;
}

/** Generated files larger than this are not read (minified megabundles still fit). */
const MAX_SCRIPT_BYTES = 64 * 1024 * 1024;
const mappingUrlPattern = /\/\/[#@]\s*sourceMappingURL=(\S+)\s*$/;

function readText(path: string): string | undefined {
  try {
    // A regular file only: a frame URL naming a FIFO or a device (a hostile run directory) must not hang the report.
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_SCRIPT_BYTES) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The last sourceMappingURL comment: it is near the end, so only the tail is searched. */
function findMappingUrl(lines: string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0 && i >= lines.length - 5; i--) {
    const m = mappingUrlPattern.exec(lines[i]);
    if (m) return m[1];
  }
  return undefined;
}

function loadMap(scriptPath: string, url: string): TraceMap | null {
  try {
    if (url.startsWith('data:')) {
      const comma = url.indexOf(',');
      const meta = url.slice(5, comma);
      const body = url.slice(comma + 1);
      const json = meta.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
      return new TraceMap(json, scriptPath);
    }
    const mapPath = url.startsWith('file://') ? fileURLToPath(url) : resolve(dirname(scriptPath), decodeURIComponent(url));
    const text = readText(mapPath);
    return text === undefined ? null : new TraceMap(text, mapPath);
  } catch {
    return null; // A broken map must not break the diagnosis: keep the generated position.
  }
}

/** Turns a resolved `sources` entry into a path (file URLs, absolute paths, bundler schemes). */
function sourceToPath(source: string, scriptPath: string): string {
  if (source.startsWith('file://')) return fileURLToPath(source);
  if (isAbsolute(source)) return source;
  const scheme = /^[a-z][\w+.-]*:\/\/[^/]*\/?(.*)$/i.exec(source);
  return resolve(dirname(scriptPath), scheme ? scheme[1] : source);
}

/** The identifier that ends just before `col` (V8 puts a function's position at its `(`). */
function nameStartBefore(line: string, col: number): number | undefined {
  let i = Math.min(col, line.length) - 1;
  while (i >= 0 && /\s/.test(line[i])) i--;
  const end = i;
  while (i >= 0 && /[\w$]/.test(line[i])) i--;
  return end > i ? i + 1 : undefined;
}

export class SourceMapResolver {
  readonly #scripts = new Map<string, ScriptInfo | null>();

  #script(path: string): ScriptInfo | null {
    let info = this.#scripts.get(path);
    if (info === undefined) {
      const text = readText(path);
      const lines = text === undefined ? null : text.split('\n');
      const url = lines ? findMappingUrl(lines) : undefined;
      info = lines ? { lines, ...(url ? { mapUrl: url } : { map: null }) } : null;
      this.#scripts.set(path, info);
    }
    return info;
  }

  /** The script's map, loaded on first use. */
  #map(path: string, info: ScriptInfo | null = this.#script(path)): TraceMap | null {
    if (!info) return null;
    if (info.map === undefined) info.map = info.mapUrl ? loadMap(path, info.mapUrl) : null;
    return info.map;
  }

  /** The text of a generated line (1-based), or undefined when the file cannot be read. */
  sourceLine(path: string, line: number): string | undefined {
    return this.#script(path)?.lines[line - 1];
  }

  /**
   * Registers a source map for a script (one the agent captured in the target, e.g. from a
   * loader's in-memory output): it takes precedence over the file's own comment.
   */
  addSourceMap(scriptPath: string, map: string | object, generatedText?: string): void {
    try {
      const traceMap = new TraceMap(map as string, scriptPath);
      const lines = generatedText?.split('\n') ?? this.#script(scriptPath)?.lines ?? [];
      this.#scripts.set(scriptPath, { lines, map: traceMap });
    } catch {
      // A malformed map is ignored, as a broken file map is.
    }
  }

  /**
   * Registers the source map URL V8 saw for a script (a `data:` URL or a path relative to the
   * script), as the agent captured it from a loader's in-memory output.
   */
  addSourceMapUrl(scriptPath: string, url: string): void {
    const map = loadMap(scriptPath, url);
    if (map === null) return;
    this.#scripts.set(scriptPath, { lines: this.#script(scriptPath)?.lines ?? [], map });
  }

  /** 1-based line of a function's declaration found by name in the file's text, if unique enough. */
  declarationLine(path: string, name: string): number | undefined {
    const lines = this.#script(path)?.lines;
    const base = name.split('.').pop() ?? name;
    if (!lines || !/^[\w$]+$/.test(base)) return undefined;
    const id = base.replace(/\$/g, '\\$');
    const patterns = [
      new RegExp(`\\bfunction\\s*\\*?\\s*${id}\\s*[<(]`),
      new RegExp(`\\b${id}\\s*(:[^=]+)?=\\s*(async\\s+)?(function\\b|\\(|[\\w$]+\\s*=>|<)`),
      new RegExp(`^\\s*(?:(?:public|private|protected|static|async|override|readonly|get|set)\\s+)*\\*?${id}\\s*[<(]`),
    ];
    for (const re of patterns) {
      const i = lines.findIndex((l) => re.test(l));
      if (i >= 0) return i + 1;
    }
    return undefined;
  }

  /**
   * The original name of the function whose literal starts at a 0-based generated position, as
   * V8's CallSite getEnclosingLineNumber/ColumnNumber give it: the `function` (or `async`)
   * keyword of a function, a method's name, an arrow's parameters (named by the binding it is
   * assigned to). Undefined without a map or a recorded name.
   */
  functionNameAt(path: string, line0: number, column0: number): string | undefined {
    const info = this.#script(path);
    const map = this.#map(path, info);
    if (!info || !map || line0 < 0) return undefined;
    const text = info.lines[line0] ?? '';
    const rest = text.slice(column0);
    const declared = /^(?:async\s+)?function\s*\*?\s*([\w$]+)/.exec(rest);
    let nameCol: number | undefined;
    if (declared) nameCol = column0 + declared[0].length - declared[1].length;
    else if (/^[\w$]+\s*\(/.test(rest)) nameCol = column0;
    else {
      const head = text.slice(0, column0);
      const binding = head.replace(/\s*[=:]\s*(?:async\s*)?$/, '');
      if (binding.length < head.length) nameCol = nameStartBefore(binding, binding.length);
    }
    if (nameCol === undefined) return undefined;
    return originalPositionFor(map, { line: line0 + 1, column: nameCol }).name ?? undefined;
  }

  /** True when the file has a usable source map. */
  hasMap(path: string): boolean {
    return this.#map(path) !== null;
  }

  /** Maps a 0-based generated position (V8's callFrame) to the original, or undefined without a map. */
  original(path: string, line0: number, column0: number): OriginalPosition | undefined {
    const info = this.#script(path);
    const map = this.#map(path, info);
    if (!info || !map || line0 < 0) return undefined;
    const pos = originalPositionFor(map, { line: line0 + 1, column: Math.max(0, column0) });
    if (pos.source === null) return undefined;
    const out: OriginalPosition = { path: sourceToPath(pos.source, path), line: pos.line, column: pos.column + 1 };
    const nameCol = nameStartBefore(info.lines[line0] ?? '', column0);
    if (nameCol !== undefined) {
      const named = originalPositionFor(map, { line: line0 + 1, column: nameCol });
      if (named.name) out.name = named.name;
    }
    if (!out.name && pos.name) out.name = pos.name;
    return out;
  }
}
