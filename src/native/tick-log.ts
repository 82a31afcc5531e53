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
  /** The first line that did not parse (its number and its first characters), to say which. */
  firstBadLine?: { line: number; text: string };
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

/** Where the last numberAt stopped: the `,` or newline after the field (or `end`). */
let fieldEnd = 0;

/**
 * The number in the field of `buf` that starts at `p` (up to the next `,` or newline before
 * `end`): `0x…` hex, else decimal (hex when `hex`); NaN for an empty field or any other
 * character. Sets fieldEnd. Reads bytes in place: no string per field (a tick line is mostly
 * addresses, and there is one line per sample).
 */
function numberAt(buf: Uint8Array, p: number, end: number, hex: boolean): number {
  let i = p;
  if (i + 1 < end && buf[i] === 48 /* 0 */ && buf[i + 1] === 120 /* x */) {
    hex = true;
    i += 2;
  }
  let v = 0;
  let digits = 0;
  let bad = false;
  for (; i < end; i++) {
    const c = buf[i];
    if (c === 44 /* , */ || c === 10 /* \n */) break;
    let d = c - 48;
    if (d < 0 || d > 9) {
      d = (c | 32) - 87; // a-f
      if (!hex || d < 10 || d > 15) {
        bad = true;
        continue;
      }
    }
    v = hex ? v * 16 + d : v * 10 + d;
    digits++;
  }
  fieldEnd = i;
  return digits > 0 && !bad ? v : NaN;
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

/** The reader's state besides the log: the JIT code map as it stands, and the functions by SharedFunctionInfo. */
interface CodeState {
  log: TickLog;
  map: CodeMap<DynamicCode>;
  /** Where each live function code object starts (to rename it in place). */
  startOf: Map<number, number>;
  funcs: Map<number, FuncInfo>;
}

function newCode(log: TickLog, type: string, name: string, state: string, isFunction: boolean, sfi: number): DynamicCode {
  const c: DynamicCode = { id: log.codes.length, type, name, state, isFunction, sfi };
  log.codes.push(c);
  return c;
}

/** Reads a line of one of READ_KINDS (code events, libraries, the version) into the state. */
function readEvent(kind: string, line: string, { log, map, startOf, funcs }: CodeState): void {
  if (kind === 'code-creation') {
    // code-creation,<type>,<kind>,<time>,<start>,<size>,<name>[,<sfi>,<state>]
    const f = line.split(',');
    if (f.length < 7) {
      log.badLines++;
      return;
    }
    const type = f[1];
    const start = hex(f[4]);
    const size = Number(f[5]);
    if (Number.isNaN(start) || Number.isNaN(size)) {
      log.badLines++;
      return;
    }
    // A name may hold escaped commas only; a raw comma means more fields: sfi and state.
    const hasFunc = type !== 'RegExp' && f.length >= 9 && /^0x[0-9a-f]+$/i.test(f[f.length - 2]);
    const name = unescapeField(hasFunc ? f.slice(6, f.length - 2).join(',') : f.slice(6).join(','));
    if (!hasFunc) {
      const code = newCode(log, type, name, '', false, 0);
      map.add(start, size, code);
      if (type === 'Builtin' || type === 'BytecodeHandler') {
        log.blobCodes.push({ start, size, id: code.id });
        if (type === 'Builtin' && log.builtins.length < 64) log.builtins.push({ name, start });
      }
      return;
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
          const renamed = newCode(log, old.type, name, old.state, true, sfi);
          map.replace(at, renamed);
          startOf.set(renamed.id, at);
          func.codes.add(renamed.id);
        }
        func.codes.delete(id);
      }
    }
    const code = newCode(log, type, name, state, true, sfi);
    func.codes.add(code.id);
    startOf.set(code.id, start);
    map.add(start, size, code);
    return;
  }
  if (kind === 'code-move') {
    const f = line.split(',');
    const from = hex(f[1]);
    const to = hex(f[2]);
    const moved = map.at(from);
    if (!map.move(from, to)) log.unknownMoves++;
    else if (moved?.isFunction) startOf.set(moved.id, to);
    return;
  }
  if (kind === 'code-delete') {
    const at = hex(line.slice(line.indexOf(',') + 1));
    const gone = map.at(at);
    if (!map.delete(at)) log.unknownDeletes++;
    else if (gone) startOf.delete(gone.id);
    return;
  }
  if (kind === 'sfi-move') {
    const f = line.split(',');
    const from = hex(f[1]);
    const func = funcs.get(from);
    if (func) {
      funcs.delete(from);
      funcs.set(hex(f[2]), func);
    }
    return;
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
    return;
  }
  if (kind === 'shared-library') {
    // shared-library,<path>,<start>,<end>,<aslr slide>
    const f = line.split(',');
    const path = unescapeField(f.slice(1, f.length - 3).join(','));
    const start = hex(f[f.length - 3]);
    const endAddr = hex(f[f.length - 2]);
    if (Number.isNaN(start) || Number.isNaN(endAddr)) {
      log.badLines++;
      return;
    }
    const slide = Number(f[f.length - 1]) || 0;
    const same = log.libraries.find((l) => l.path === path && l.start === start);
    if (same) same.end = Math.max(same.end, endAddr);
    else log.libraries.push({ path, start, end: endAddr, aslrSlide: slide });
    return;
  }
  if (kind === 'new') {
    if (line.startsWith('new,CodeRange,')) log.codeRange = hex(line.split(',')[2]);
    return;
  }
  if (kind === 'v8-version') {
    // v8-version,11,3,244,8,-node.38,0
    const f = line.split(',');
    log.v8Major = Number(f[1]);
    log.v8Version = `${f[1]}.${f[2]}.${f[3]}.${f[4]}${f[5] && f[5] !== '0' ? f[5] : ''}`;
    return;
  }
}

/** `tick,` at the start of a line. */
const isTickLine = (buf: Uint8Array, p: number): boolean =>
  buf[p] === 116 && buf[p + 1] === 105 && buf[p + 2] === 99 && buf[p + 3] === 107 && buf[p + 4] === 44;

/** Kinds of line read beyond their kind; the others (script sources, code-source-info...) are only counted. */
const READ_KINDS = new Set(['code-creation', 'code-move', 'code-delete', 'sfi-move', 'code-deopt', 'shared-library', 'new', 'v8-version']);

/** A frame's address: the code object the map holds there as -(id + 1), else the address; 0 for none. */
function frameOf(map: CodeMap<DynamicCode>, addr: number): number {
  if (!(addr > 0)) return 0;
  const code = map.find(addr);
  return code ? -(code.id + 1) : addr;
}

/**
 * Reads the tick line at `pos` into the log, each frame named from the code map as it stands;
 * returns where the next line starts. The hot path (one line per sample), byte by byte in
 * place, in a function of its own so that it is optimized early:
 * tick,<pc>,<µs>,<is external callback>,<tos or callback>,<vm state>[,<frame>...]
 */
function readTick(buf: Uint8Array, pos: number, end: number, map: CodeMap<DynamicCode>, log: TickLog): number {
  let p = pos + 4; // the comma after `tick`
  let pc = NaN;
  let time = NaN;
  let external = false;
  let tos = NaN;
  let state = NaN;
  let field = 0;
  // One call site per kind of field keeps this function small: it is compiled sooner.
  for (; field < 5 && buf[p] === 44; field++) {
    const v = numberAt(buf, p + 1, end, false);
    if (field === 0) pc = v;
    else if (field === 1) time = v;
    else if (field === 2) external = buf[p + 1] === 49; /* 1 */
    else if (field === 3) tos = v;
    else state = fieldEnd === p + 1 ? 0 : v; // an empty state field reads as 0, as Number('') does
    p = fieldEnd;
  }
  if (field < 5 || Number.isNaN(pc) || Number.isNaN(time)) {
    log.badLines++;
    const nl = buf.indexOf(10, p);
    return nl < 0 || nl >= end ? end : nl + 1;
  }
  const fr = log.frames;
  const top = external && tos > 0;
  fr.push(frameOf(map, top ? tos : pc));
  if (!top && tos > 0) {
    // A frameless call: the top of the stack points into the calling JS function.
    const c = map.find(tos);
    if (c?.isFunction) fr.push(-(c.id + 1));
  }
  let prev = pc;
  while (buf[p] === 44) {
    const c0 = buf[p + 1];
    if (c0 === 111 /* o: overflow */) break;
    // `+`/`-` and a hex delta: relative to the frame before (compressed logs of old V8s).
    const sign = c0 === 43 /* + */ ? 1 : c0 === 45 /* - */ ? -1 : 0;
    const v = numberAt(buf, sign === 0 ? p + 1 : p + 2, end, sign !== 0);
    prev = sign === 0 ? v : prev + sign * v;
    fr.push(frameOf(map, prev));
    p = fieldEnd;
  }
  log.times.push(time);
  log.states.push(state);
  log.frameStart.push(fr.length);
  const nl = buf[p] === 10 ? p : buf.indexOf(10, p);
  return nl < 0 || nl >= end ? end : nl + 1;
}

/** Keeps the first malformed line's number and first characters, for the warning that says it was skipped. */
function noteBadLine(log: TickLog, lineNo: number, buf: Buffer, from: number, to: number): void {
  if (log.firstBadLine) return;
  let end = Math.min(to, from + BAD_LINE_SHOWN);
  if (buf[end - 1] === 10) end--;
  log.firstBadLine = { line: lineNo, text: buf.toString('utf8', from, end) };
}

/** How much of a malformed line a warning shows. */
const BAD_LINE_SHOWN = 120;

/**
 * Parses a tick log (its bytes as read, or its text). Throws HOTPATH_ERR_TICK_LOG / _VERSION on
 * what is not one. V8 writes the log in ASCII (it escapes every other character).
 */
export function parseTickLog(data: Buffer | string, file: string): TickLog {
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
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (buf.length === 0) throw notATickLog(file, 'the file is empty');
  if (buf.indexOf(0) >= 0) throw notATickLog(file, 'it holds binary data');
  const map = new CodeMap<DynamicCode>();
  const state: CodeState = { log, map, startOf: new Map(), funcs: new Map() };
  const counts = log.lineCounts;
  let sawMark = false;
  let lineNo = 0;
  let tickLines = 0;
  let pos = 0;
  const n = buf.length;
  // A last line without its newline was cut mid-write: only the complete lines are read.
  const end = buf[n - 1] === 10 ? n : ((log.truncated = true), buf.lastIndexOf(10) + 1);
  while (pos < end) {
    lineNo++;
    if (isTickLine(buf, pos)) {
      if (tickLines++ === 0) counts.tick = 0; // keeps the kinds in the order they came
      sawMark = true;
      const bad = log.badLines;
      const from = pos;
      pos = readTick(buf, pos, end, map, log);
      if (log.badLines !== bad) noteBadLine(log, lineNo, buf, from, pos);
      continue;
    }
    let nl = buf.indexOf(10, pos);
    if (nl < 0 || nl > end) nl = end;
    const from = pos;
    pos = nl + 1;
    if (nl === from) continue;
    let comma = buf.indexOf(44, from);
    if (comma >= nl) comma = -1;
    // A kind is a short word: a longer first field is read only as far as a message needs.
    const kind = buf.toString('latin1', from, comma < 0 ? Math.min(nl, from + 80) : Math.min(comma, from + 80));
    if (kind === 'tick') {
      // `tick` alone on its line: a tick without its fields.
      if (tickLines++ === 0) counts.tick = 0;
      sawMark = true;
      log.badLines++;
      noteBadLine(log, lineNo, buf, from, nl);
      continue;
    }
    counts[kind] = (counts[kind] ?? 0) + 1;
    if (!sawMark) {
      if (kind === 'v8-version' || kind === 'shared-library' || kind === 'code-creation' || kind === 'profiler') sawMark = true;
      else if (lineNo >= SNIFF_LINES || !/^[a-z][a-z0-9-]*$/.test(kind)) {
        throw notATickLog(file, `line ${lineNo} is ${JSON.stringify(buf.toString('utf8', from, Math.min(nl, from + 240)).slice(0, 60))}`);
      }
    }
    if (!READ_KINDS.has(kind)) continue;
    const bad = log.badLines;
    readEvent(kind, buf.toString('utf8', from, nl), state);
    if (log.badLines !== bad) noteBadLine(log, lineNo, buf, from, nl);
  }
  if (!sawMark) throw notATickLog(file, 'it has none of the lines V8 writes (v8-version, shared-library, code-creation, tick)');
  if (log.v8Major !== undefined && log.v8Major < MIN_V8_MAJOR) {
    throw hotpathError(
      'HOTPATH_ERR_TICK_LOG_VERSION',
      `${file} was written by V8 ${log.v8Version} (Node.js 10 or older); hotpath reads tick logs of V8 ${MIN_V8_MAJOR} and later (Node.js 12+). Process it with that Node's own node --prof-process.`,
      { details: { file, v8Version: log.v8Version } },
    );
  }
  if (tickLines > 0) counts.tick = tickLines;
  if (log.times.length === 0) {
    throw notATickLog(file, 'it holds no ticks (was it written with --prof? --log alone records no samples)');
  }
  return log;
}

/** V8 7 (Node.js 12) is the oldest log format this reader was checked against. */
export const MIN_V8_MAJOR = 7;
