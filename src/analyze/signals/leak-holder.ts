// What most likely holds a leak's bytes, read from the culprit function's source: the
// collection it stores into (`cache.set(...)`, `entries.push(...)`, `byId[key] = ...`,
// `emitter.on(...)`, `signal.addEventListener(...)`, `log += '...'`) when that collection is not the function's own (not declared in it, not a
// parameter), and where that collection is declared: at the module's top level (lives as long
// as the process) or inside an enclosing function (a closure keeps it). The heap profile says
// which function allocated what stayed alive; only a heap snapshot could say who references it,
// and taking one stops the target for seconds: this reads the code instead, and says "most
// likely". Brace counting is approximate (strings and comments are stripped per line, template
// literals spanning lines are not): a wrong scope is possible, a wrong name unlikely.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Culprit } from '../finding.js';

/** Source files larger than this are not read. */
export const HOLDER_MAX_SOURCE_BYTES = 2 * 1024 * 1024;
/** At most this many lines of the culprit function are read. */
export const HOLDER_MAX_FUNCTION_LINES = 300;

export type HolderKind = 'Map' | 'Set' | 'WeakMap' | 'array' | 'object' | 'EventEmitter' | 'EventTarget' | 'string' | 'value';

export interface LeakHolder {
  /** The collection's name as written (`sessions`, `this.cache`, `shutdown.signal`). */
  name: string;
  kind: HolderKind;
  /** Module top level, inside an enclosing function (a closure), or an object's property (`this.x`). */
  scope: 'module' | 'closure' | 'property';
  /** How the culprit stores into it: `set`, `push`, `[]=`, `on`... */
  via: string;
  /** 1-based line of the store in the culprit, and of the declaration when found. */
  storeLine: number;
  declaredLine?: number;
  /** The function the declaration lies in (closure scope). */
  enclosing?: string;
}

/** A store into a name or a member chain (`cache`, `this.cache`, `shutdown.signal`): a call that keeps its argument, or an indexed assignment. */
const STORE =
  /(?<![\w$.])((?:this\.)?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*(?:\.\s*(set|push|unshift|add|splice|on|addListener|prependListener|addEventListener|concat)\s*\(|\[[^\]]+\]\s*=(?!=))/g;
/**
 * A string appended to (`trail += \`${line}\n\``): a string that lives past the call grows by what
 * each call appends. Only with a string or template on the right, so a counter (`hits += 1`) is none.
 */
const APPEND = /(?<![\w$.])((?:this\.)?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\+=(?=[^;]*[`'"])/g;
const FUNCTION_NAME =
  /(?:function\s*\*?\s*([A-Za-z_$][\w$]*)|([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)|^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{)/;

/** Reads the culprit's file under `cwd` and finds its holder. */
export function leakHolder(cwd: string, culprit: Culprit): LeakHolder | undefined {
  if (culprit.line < 1 || culprit.file === '' || culprit.file.startsWith('node:')) return undefined;
  const path = isAbsolute(culprit.file) ? culprit.file : join(cwd, culprit.file);
  try {
    if (statSync(path).size > HOLDER_MAX_SOURCE_BYTES) return undefined;
    return findHolder(readFileSync(path, 'utf8'), culprit.line);
  } catch {
    return undefined;
  }
}

/** The holder the function starting at `line` (1-based) of `source` stores into, if any. */
export function findHolder(source: string, line: number): LeakHolder | undefined {
  const lines = source.split(/\r?\n/).map(codeOf);
  const start = line - 1;
  if (start < 0 || start >= lines.length) return undefined;
  const end = functionEnd(lines, start);
  const body = lines.slice(start, end + 1);
  const own = ownNames(body.join('\n'));
  for (let i = 0; i < body.length; i++) {
    for (const { name, via } of storesIn(body[i])) {
      if (name.startsWith('this.')) return { name, kind: kindOfVia(via), scope: 'property', via, storeLine: start + i + 1 };
      // A member chain (`shutdown.signal`) lives as long as the name it starts from.
      const root = name.split('.')[0];
      if (own.has(root) || KEYWORDS.has(root)) continue;
      const decl = declarationOf(lines, root, start);
      if (decl === undefined) continue;
      return {
        name,
        kind: decl.kind === 'value' || root !== name ? kindOfVia(via) : decl.kind,
        scope: decl.depth === 0 ? 'module' : 'closure',
        via,
        storeLine: start + i + 1,
        declaredLine: decl.line + 1,
        ...(decl.enclosing ? { enclosing: decl.enclosing } : {}),
      };
    }
  }
  return undefined;
}

/** The stores on one line, left to right: calls and indexed assignments, then string appends. */
function storesIn(line: string): { name: string; via: string }[] {
  const out: { name: string; via: string; at: number }[] = [];
  for (const m of line.matchAll(STORE)) out.push({ name: m[1], via: m[2] ?? '[]=', at: m.index ?? 0 });
  for (const m of line.matchAll(APPEND)) out.push({ name: m[1], via: '+=', at: m.index ?? 0 });
  return out.sort((a, b) => a.at - b.at);
}

const KEYWORDS = new Set([
  'return',
  'await',
  'yield',
  'typeof',
  'void',
  'new',
  'delete',
  'in',
  'of',
  'case',
  'console',
  'process',
  'res',
  'req',
  'JSON',
  'Object',
  'Array',
  'Promise',
  'Math',
  'Reflect',
]);

function kindOfVia(via: string): HolderKind {
  if (via === 'push' || via === 'unshift' || via === 'splice' || via === 'concat') return 'array';
  if (via === 'on' || via === 'addListener' || via === 'prependListener') return 'EventEmitter';
  if (via === 'addEventListener') return 'EventTarget';
  if (via === '+=') return 'string';
  if (via === '[]=') return 'object';
  return 'value';
}

/** A line without its comments and the contents of its string literals (braces in them do not count). */
function codeOf(line: string): string {
  return line
    .replace(/(["'`])(?:\\.|(?!\1).)*\1/g, (s) => `${s[0]}${' '.repeat(Math.max(0, s.length - 2))}${s[0]}`)
    .replace(/\/\/.*$/, '')
    .replace(/\/\*.*?\*\//g, '');
}

/** The last line of the function that starts at `start`: where its braces close. */
function functionEnd(lines: string[], start: number): number {
  let depth = 0;
  let opened = false;
  const last = Math.min(lines.length - 1, start + HOLDER_MAX_FUNCTION_LINES);
  for (let i = start; i <= last; i++) {
    for (const ch of lines[i]) {
      if (ch === '{') {
        depth++;
        opened = true;
      } else if (ch === '}') depth--;
    }
    if (opened && depth <= 0) return i;
    // An arrow function with an expression body ends on its line.
    if (!opened && i === start && /=>\s*[^{\s]/.test(lines[i])) return i;
  }
  return last;
}

/** Names the function declares or takes as parameters (its own, not a holder). */
function ownNames(body: string): Set<string> {
  const out = new Set<string>();
  for (const m of body.matchAll(/\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)/g)) out.add(m[1]);
  for (const m of body.matchAll(/\b(?:const|let|var)\s*[{[]([^}\]=]*)[}\]]/g)) for (const n of m[1].split(/[,\s:]+/)) if (n) out.add(n);
  const params = /^[^(]*?\(([^)]*)\)/.exec(body)?.[1] ?? '';
  for (const p of params.split(',')) {
    const n = /([A-Za-z_$][\w$]*)\s*(?:=.*)?$/.exec(p.trim().replace(/^\.\.\./, ''))?.[1];
    if (n) out.add(n);
  }
  const arrowParam = /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(body)?.[1];
  if (arrowParam) out.add(arrowParam);
  return out;
}

/** The nearest declaration of `name` above `before` (else anywhere at the top level), its kind, brace depth and enclosing function. */
function declarationOf(
  lines: string[],
  name: string,
  before: number,
): { line: number; kind: HolderKind; depth: number; enclosing?: string } | undefined {
  const decl = new RegExp(`\\b(?:const|let|var)\\s+${name.replace(/\$/g, '\\$')}\\b\\s*(?::[^=]+)?(=\\s*(.*))?`);
  const depths: number[] = [];
  let depth = 0;
  for (const l of lines) {
    depths.push(depth);
    for (const ch of l) {
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
    }
  }
  let found = -1;
  for (let i = before; i >= 0; i--)
    if (decl.test(lines[i])) {
      found = i;
      break;
    }
  if (found < 0)
    for (let i = before + 1; i < lines.length; i++)
      if (depths[i] === 0 && decl.test(lines[i])) {
        found = i;
        break;
      }
  if (found < 0) return undefined;
  const init = decl.exec(lines[found])?.[2] ?? '';
  const kind: HolderKind = /^new\s+Map\b/.test(init)
    ? 'Map'
    : /^new\s+WeakMap\b/.test(init)
      ? 'WeakMap'
      : /^new\s+Set\b/.test(init)
        ? 'Set'
        : /^(\[|new\s+Array\b|Array\.)/.test(init)
          ? 'array'
          : /^new\s+(EventEmitter|events\.EventEmitter)\b/.test(init)
            ? 'EventEmitter'
            : /^\{/.test(init) || /^Object\.create\b/.test(init)
              ? 'object'
              : 'value';
  const d = depths[found];
  let enclosing: string | undefined;
  if (d > 0) {
    for (let i = found; i >= 0; i--) {
      if (depths[i] < d || (i < found && depths[i] === d - 1)) {
        const m = FUNCTION_NAME.exec(lines[i]);
        if (m) {
          enclosing = m[1] ?? m[2] ?? m[3];
          break;
        }
        if (depths[i] === 0) break;
      }
    }
  }
  return { line: found, kind, depth: d, ...(enclosing ? { enclosing } : {}) };
}

/** " They are most likely kept in `sessions`, a Map declared at the module's top level (server.js:2), which `rememberSession` fills (`set`, line 5)." */
export function describeHolder(h: LeakHolder, culprit: Culprit): string {
  const what =
    h.kind === 'value'
      ? 'a value'
      : h.kind === 'array'
        ? 'an array'
        : h.kind === 'object'
          ? 'an object'
          : h.kind === 'EventEmitter' || h.kind === 'EventTarget'
            ? `an ${h.kind}`
            : h.kind === 'string'
              ? 'a string'
              : `a ${h.kind}`;
  const root = h.name.split('.')[0];
  const at = h.declaredLine !== undefined ? ` (${culprit.file}:${h.declaredLine})` : '';
  // A member chain is declared through the name it starts from.
  const reached = h.scope !== 'property' && root !== h.name ? `${what} reached from \`${root}\`,` : what;
  const where =
    h.scope === 'module'
      ? `${reached} declared at the module's top level${at}, which lives as long as the process`
      : h.scope === 'closure'
        ? `${reached} declared${h.enclosing ? ` in \`${h.enclosing}\`` : ' in an enclosing function'}${at} and kept alive by the closure \`${culprit.function}\` that uses it`
        : `a property of the object that \`${culprit.function}\` runs on`;
  const how =
    h.via === '[]='
      ? 'assigns into it'
      : h.via === '+='
        ? 'appends to it (`+=`)'
        : h.kind === 'EventEmitter' || h.kind === 'EventTarget'
          ? `adds listeners to it (\`${h.via}\`)`
          : `adds to it (\`${h.via}\`)`;
  return ` They are most likely kept in \`${h.name}\`, ${where}; \`${culprit.function}\` ${how} at ${culprit.file}:${h.storeLine}.`;
}
