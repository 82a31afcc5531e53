// Reads a V8 tick log (`node --prof`, also with --log-internal-timer-events) in one pass, in
// log order, keeping the JIT code map as it stands at each line: code-creation, code-move,
// code-delete and sfi-move change it, and each tick's JS frames are named from the map at the
// moment of the tick (as V8 named that code then). Addresses the map does not hold (C++ in the
// node binary and shared libraries) are kept as numbers, resolved afterwards against the
// symbols of the libraries named in the `shared-library` lines (symbolize.ts).
// The format is V8's (src/logging/log.cc); this reader shares no code with V8's tools.

import { hotpathError } from '../errors.js';
import { CodeMap } from './code-map.js';

/** A code object from a code-creation line. Immutable: a change of name or tier makes a new one. */
export interface DynamicCode {
  /** Index in `TickLog.codes`. */
  id: number;
  /** V8's code type: JS, Eval, Builtin, BytecodeHandler, RegExp, Stub, Handler... */
  type: string;
  /** The name as logged: `fib /app/server.js:3:13` for functions, the builtin's name otherwise. */
  name: string;
  /** Tier marker of function code: '' (builtin), `~` interpreted, `^` Sparkplug, `+` Maglev, `*` TurboFan. */
  state: string;
  /** True for code of a JS function (it has a SharedFunctionInfo). */
  isFunction: boolean;
  /** The function's SharedFunctionInfo address at creation (0 when none). */
  sfi: number;
}

export interface LibraryRange {
  path: string;
  start: number;
  end: number;
  aslrSlide: number;
}

/** What one deopt line said, for the function's report. */
export interface DeoptRecord {
  codeId: number;
  reason: string;
  bailout: string;
  position: string;
}

export interface TickLog {
  file: string;
  /** `11.3.244.8-node.38`, from the `v8-version` line. */
  v8Version?: string;
  v8Major?: number;
  libraries: LibraryRange[];
  codes: DynamicCode[];
  /** Tick times in µs since the log started. */
  times: number[];
  /** V8 VM state of each tick (0 JS, 1 GC, ... 6 EXTERNAL, 8 IDLE on V8 >= 8). */
  states: number[];
  /** Offsets into `frames`: tick i's frames are frames[frameStart[i] .. frameStart[i + 1]). */
  frameStart: number[];
  /**
   * Each tick's frames, top (the pc) first: a code object as `-(id + 1)`, an address the code
   * map did not hold as the address itself, a frame V8 could not give as 0.
   */
  frames: number[];
  deopts: DeoptRecord[];
  /** The first builtins the log placed (name, address): checks that a binary is the one that ran. */
  builtins: { name: string; start: number }[];
  /** Builtins and bytecode handlers (V8's embedded blob), with their code ids. */
  blobCodes: { start: number; size: number; id: number }[];
  /** Start of V8's JIT code range (`new,CodeRange`), where it re-maps the embedded blob. */
  codeRange?: number;
  /** Counts of code events that named unknown code (V8 prints them as warnings too). */
  unknownMoves: number;
  unknownDeletes: number;
  /** The log's last line was cut short (a killed process, an incomplete copy). */
  truncated: boolean;
  /** Lines that did not parse. */
  badLines: number;
  /** Record kinds read, for diagnostics. */
  lineCounts: Record<string, number>;
}

/** Replaces V8's log escapes (`\x2C`, `\n`, `\\`, `\u00e9`) in one field. */
export function unescapeField(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c !== '\\' || i + 1 >= s.length) {
      out += c;
      i++;
      continue;
    }
    const k = s[i + 1];
    if (k === 'n') {
      out += '\n';
      i += 2;
    } else if (k === '\\') {
      out += '\\';
      i += 2;
    } else if (k === 'x') {
      out += String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16));
      i += 4;
    } else if (k === 'u') {
      out += String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16));
      i += 6;
    } else {
      out += k;
      i += 2;
    }
  }
  return out;
}

const hex = (s: string | undefined): number => (s === undefined || s === '' ? NaN : Number(s));

/** `0x…` (or decimal) between `from` and `to` of `line`, read in place: no substring per frame. */
function hexAt(line: string, from: number, to: number): number {
  if (to <= from) return NaN;
  if (line.charCodeAt(from) !== 48 || line.charCodeAt(from + 1) !== 120) return Number(line.slice(from, to));
  let v = 0;
  for (let i = from + 2; i < to; i++) {
    const c = line.charCodeAt(i);
    const d = c <= 57 ? c - 48 : (c | 32) - 87;
    if (d < 0 || d > 15) return NaN;
    v = v * 16 + d;
  }
  return to > from + 2 ? v : NaN;
}

interface FuncInfo {
  name: string;
  codes: Set<number>;
}

/** How far into a file to look for the marks of a tick log before calling it something else. */
const SNIFF_LINES = 200;

function notATickLog(file: string, why: string): Error {
  return hotpathError('HOTPATH_ERR_TICK_LOG', `${file} is not a V8 tick log (node --prof writes isolate-*-v8.log): ${why}`, {
    details: { file },
  });
}

/** Parses the text of a tick log. Throws HOTPATH_ERR_TICK_LOG / _VERSION on what is not one. */
export function parseTickLog(text: string, file: string): TickLog {
  const log: TickLog = {
    file,
    libraries: [],
    codes: [],
    times: [],
    states: [],
    frameStart: [0],
    frames: [],
    deopts: [],
    builtins: [],
    blobCodes: [],
    unknownMoves: 0,
    unknownDeletes: 0,
    truncated: false,
    badLines: 0,
    lineCounts: {},
  };
  if (text.length === 0) throw notATickLog(file, 'the file is empty');
  if (text.includes('\u0000')) throw notATickLog(file, 'it holds binary data');
  const map = new CodeMap<DynamicCode>();
  /** Where each live function code object starts (to rename it in place). */
  const startOf = new Map<number, number>();
  const funcs = new Map<number, FuncInfo>();
  const counts = log.lineCounts;
  let sawMark = false;
  let lineNo = 0;
  let pos = 0;
  const n = text.length;
  // A last line without its newline was cut mid-write: only the complete lines are read.
  const end = text.endsWith('\n') ? n : ((log.truncated = true), text.lastIndexOf('\n') + 1);
  const newCode = (type: string, name: string, state: string, isFunction: boolean, sfi: number): DynamicCode => {
    const c: DynamicCode = { id: log.codes.length, type, name, state, isFunction, sfi };
    log.codes.push(c);
    return c;
  };
  while (pos < end) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = end;
    const line = text.slice(pos, nl);
    pos = nl + 1;
    lineNo++;
    if (line.length === 0) continue;
    const comma = line.indexOf(',');
    const kind = comma < 0 ? line : line.slice(0, comma);
    counts[kind] = (counts[kind] ?? 0) + 1;
    if (!sawMark) {
      if (kind === 'v8-version' || kind === 'shared-library' || kind === 'code-creation' || kind === 'tick' || kind === 'profiler')
        sawMark = true;
      else if (lineNo >= SNIFF_LINES || !/^[a-z][a-z0-9-]*$/.test(kind)) {
        throw notATickLog(file, `line ${lineNo} is ${JSON.stringify(line.slice(0, 60))}`);
      }
    }
    if (kind === 'tick') {
      // tick,<pc>,<µs>,<is external callback>,<tos or callback>,<vm state>[,<frame>...]: scanned
      // in place (the hot path: one line per sample).
      let k = comma;
      for (let j = 0; j < 4 && k >= 0; j++) k = line.indexOf(',', k + 1);
      if (k < 0) {
        log.badLines++;
        continue;
      }
      let p0 = comma + 1;
      let p1 = line.indexOf(',', p0);
      const pc = hexAt(line, p0, p1);
      p0 = p1 + 1;
      p1 = line.indexOf(',', p0);
      const time = Number(line.slice(p0, p1));
      p0 = p1 + 1;
      p1 = line.indexOf(',', p0);
      const external = line.charCodeAt(p0) === 49; /* 1 */
      p0 = p1 + 1;
      p1 = line.indexOf(',', p0);
      const tos = hexAt(line, p0, p1);
      p0 = p1 + 1;
      p1 = line.indexOf(',', p0);
      if (Number.isNaN(pc) || Number.isNaN(time)) {
        log.badLines++;
        continue;
      }
      const state = Number(p1 < 0 ? line.slice(p0) : line.slice(p0, p1));
      const fr = log.frames;
      const push = (addr: number) => {
        if (!(addr > 0)) {
          fr.push(0);
          return;
        }
        const code = map.find(addr);
        fr.push(code ? -(code.id + 1) : addr);
      };
      if (external && tos > 0) push(tos);
      else {
        push(pc);
        // A frameless call: the top of the stack points into the calling JS function.
        if (tos > 0) {
          const c = map.find(tos);
          if (c?.isFunction) fr.push(-(c.id + 1));
        }
      }
      let prev = pc;
      while (p1 >= 0) {
        p0 = p1 + 1;
        p1 = line.indexOf(',', p0);
        const c0 = line.charCodeAt(p0);
        const to = p1 < 0 ? line.length : p1;
        if (c0 === 43 /* + */) {
          prev += hexAt(line, p0 + 1, to);
          push(prev);
        } else if (c0 === 45 /* - */) {
          prev -= hexAt(line, p0 + 1, to);
          push(prev);
        } else if (c0 === 111 /* o: overflow */) break;
        else {
          prev = hexAt(line, p0, to);
          push(prev);
        }
      }
      log.times.push(time);
      log.states.push(state);
      log.frameStart.push(fr.length);
      continue;
    }
    if (kind === 'code-creation') {
      // code-creation,<type>,<kind>,<time>,<start>,<size>,<name>[,<sfi>,<state>]
      const f = line.split(',');
      if (f.length < 7) {
        log.badLines++;
        continue;
      }
      const type = f[1];
      const start = hex(f[4]);
      const size = Number(f[5]);
      if (Number.isNaN(start) || Number.isNaN(size)) {
        log.badLines++;
        continue;
      }
      // A name may hold escaped commas only; a raw comma means more fields: sfi and state.
      const hasFunc = type !== 'RegExp' && f.length >= 9 && /^0x[0-9a-f]+$/i.test(f[f.length - 2]);
      const name = unescapeField(hasFunc ? f.slice(6, f.length - 2).join(',') : f.slice(6).join(','));
      if (!hasFunc) {
        const code = newCode(type, name, '', false, 0);
        map.add(start, size, code);
        if (type === 'Builtin' || type === 'BytecodeHandler') {
          log.blobCodes.push({ start, size, id: code.id });
          if (type === 'Builtin' && log.builtins.length < 64) log.builtins.push({ name, start });
        }
        continue;
      }
      const sfi = hex(f[f.length - 2]);
      // V8 13 marks some tiers with a trailing quote (`*'`, `+'`); the tier is the first mark.
      const state = f[f.length - 1].replace(/'$/, '');
      let func = funcs.get(sfi);
      if (!func) funcs.set(sfi, (func = { name, codes: new Set() }));
      else if (func.name !== name) {
        // The SharedFunctionInfo's memory now holds another function: rename its live code.
        func.name = name;
        for (const id of [...func.codes]) {
          const old = log.codes[id];
          const at = startOf.get(id);
          startOf.delete(id);
          if (at !== undefined && map.at(at) === old) {
            const renamed = newCode(old.type, name, old.state, true, sfi);
            map.replace(at, renamed);
            startOf.set(renamed.id, at);
            func.codes.add(renamed.id);
          }
          func.codes.delete(id);
        }
      }
      const code = newCode(type, name, state, true, sfi);
      func.codes.add(code.id);
      startOf.set(code.id, start);
      map.add(start, size, code);
      continue;
    }
    if (kind === 'code-move') {
      const f = line.split(',');
      const from = hex(f[1]);
      const to = hex(f[2]);
      const moved = map.at(from);
      if (!map.move(from, to)) log.unknownMoves++;
      else if (moved?.isFunction) startOf.set(moved.id, to);
      continue;
    }
    if (kind === 'code-delete') {
      const at = hex(line.slice(comma + 1));
      const gone = map.at(at);
      if (!map.delete(at)) log.unknownDeletes++;
      else if (gone) startOf.delete(gone.id);
      continue;
    }
    if (kind === 'sfi-move') {
      const f = line.split(',');
      const from = hex(f[1]);
      const func = funcs.get(from);
      if (func) {
        funcs.delete(from);
        funcs.set(hex(f[2]), func);
      }
      continue;
    }
    if (kind === 'code-deopt') {
      // code-deopt,<time>,<size>,<code>,<inlining id>,<script offset>,<bailout>,<position>,<reason>
      const f = line.split(',');
      const code = map.at(hex(f[3]));
      if (code)
        log.deopts.push({
          codeId: code.id,
          bailout: f[6] ?? '',
          position: unescapeField(f[7] ?? ''),
          reason: unescapeField(f.slice(8).join(',')),
        });
      continue;
    }
    if (kind === 'shared-library') {
      // shared-library,<path>,<start>,<end>,<aslr slide>
      const f = line.split(',');
      const path = unescapeField(f.slice(1, f.length - 3).join(','));
      const start = hex(f[f.length - 3]);
      const endAddr = hex(f[f.length - 2]);
      if (Number.isNaN(start) || Number.isNaN(endAddr)) {
        log.badLines++;
        continue;
      }
      const slide = Number(f[f.length - 1]) || 0;
      const same = log.libraries.find((l) => l.path === path && l.start === start);
      if (same) same.end = Math.max(same.end, endAddr);
      else log.libraries.push({ path, start, end: endAddr, aslrSlide: slide });
      continue;
    }
    if (kind === 'new') {
      if (line.startsWith('new,CodeRange,')) log.codeRange = hex(line.split(',')[2]);
      continue;
    }
    if (kind === 'v8-version') {
      // v8-version,11,3,244,8,-node.38,0
      const f = line.split(',');
      log.v8Major = Number(f[1]);
      log.v8Version = `${f[1]}.${f[2]}.${f[3]}.${f[4]}${f[5] && f[5] !== '0' ? f[5] : ''}`;
      continue;
    }
  }
  if (!sawMark) throw notATickLog(file, 'it has none of the lines V8 writes (v8-version, shared-library, code-creation, tick)');
  if (log.v8Major !== undefined && log.v8Major < MIN_V8_MAJOR) {
    throw hotpathError(
      'HOTPATH_ERR_TICK_LOG_VERSION',
      `${file} was written by V8 ${log.v8Version} (Node.js 10 or older); hotpath reads tick logs of V8 ${MIN_V8_MAJOR} and later (Node.js 12+). Process it with that Node's own node --prof-process.`,
      { details: { file, v8Version: log.v8Version } },
    );
  }
  if (log.times.length === 0) {
    throw notATickLog(file, 'it holds no ticks (was it written with --prof? --log alone records no samples)');
  }
  return log;
}

/** V8 7 (Node.js 12) is the oldest log format this reader was checked against. */
export const MIN_V8_MAJOR = 7;
