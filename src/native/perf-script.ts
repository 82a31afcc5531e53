// `perf script` output (Linux perf, as in Netflix's "Node.js in flames" workflow: node run with
// --perf-basic-prof, `perf record -g`, `perf script`) into CPU profiles of hotpath's model:
// one per process, kernel, libuv, V8 C++ and JS frames in one stack.
//
// A sample is a header line `<comm> <pid>[/<tid>] [<cpu>] <time>: [<period>] <event>:` and its
// frames, leaf first, one per line: `<address> <symbol>[+<offset>] (<object>)`. JS frames come
// from /tmp/perf-<pid>.map, named by V8: `JS:*fib /app/x.js:3`, `LazyCompile:~f /app/x.js:3:10`
// (older V8), `Builtin:ArrayMap`... Samples of other threads than the main one (libuv's pool,
// V8's workers) sit under a `[thread <comm>]` frame. Each sample weighs one sampling period.

import { createReadStream } from 'node:fs';
import { basename, isAbsolute } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { hotpathError } from '../errors.js';
import type { CpuCallFrame, CpuProfile, CpuProfileNode } from '../profile/cpu-profile.js';
import { cppName, scriptUrl } from './ticks-to-cpuprofile.js';
import { demangleProfiles } from './demangle-profile.js';
import { KERNEL_SUFFIX } from '../profile/classify-frame.js';
import type { PerfMap } from './perf-map.js';

export interface PerfProcess {
  pid: number;
  comm: string;
  profile: CpuProfile;
  samples: number;
  /** Seconds (perf's clock) of the first and last sample. */
  firstTime: number;
  lastTime: number;
}

export interface PerfScriptResult {
  processes: PerfProcess[];
  /** Lines that were neither a sample header nor a frame. */
  skippedLines: number;
  events: string[];
}

const headerRe = /^(\S.*?)\s+(\d+)(?:\/(\d+))?\s+(?:\[\d+\]\s+)?(\d+\.\d+):\s*(?:(\d+)\s+)?([^\s:]+(?::[a-zA-Z]+)?):/;
const frameRe = /^\s+([0-9a-f]+)\s+(.*?)\s+\(([^()]*(?:\([^()]*\))?[^()]*)\)\s*$/;

/** A frame's call frame: JS from a perf map keeps V8's name, file and line; natives their symbol. */
export function perfCallFrame(symbol: string, object: string): CpuCallFrame {
  const none = { scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
  const sym = symbol.replace(/\+0x[0-9a-f]+$/, '');
  if (/\/perf-\d+\.map$/.test(object) || object === '[JIT] tid' || /^jitted-/.test(basename(object))) {
    const m = /^(?:JS|LazyCompile|Function|Script|Eval|Interpreted|Baseline|Maglev|Turbofan):\s*([~^+*']*)(.*)$/.exec(sym);
    if (m) {
      const rest = m[2];
      const loc = /^(.*?)\s*(\S+?):(\d+)(?::(\d+))?$/.exec(rest);
      if (loc && (isAbsolute(loc[2]) || /^(node|file|https?):/.test(loc[2]))) {
        return {
          functionName: loc[1],
          scriptId: '1',
          url: scriptUrl(loc[2]),
          lineNumber: Number(loc[3]) - 1,
          columnNumber: loc[4] ? Number(loc[4]) - 1 : 0,
        };
      }
      return { functionName: rest.trim(), scriptId: '1', url: '', lineNumber: -1, columnNumber: -1 };
    }
    const regexp = /^RegExp:\s*(.*)$/.exec(sym);
    if (regexp) return { functionName: `RegExp: ${regexp[1]}`, ...none };
    return { functionName: sym.replace(/^(\w+):\s*/, '$1: '), ...none };
  }
  if (sym === '[unknown]' || sym === '') return { functionName: `[unknown] (${basename(object)})`, ...none };
  if (object === '[kernel.kallsyms]' || object.startsWith('[kernel')) return { functionName: `${sym}${KERNEL_SUFFIX}`, ...none };
  // As `hotpath prof` names C++: without the ELF symbol version (`pthread_mutex_init@@GLIBC_2.2.5`).
  return { functionName: cppName(sym), ...none };
}

/** V8's perf map marks optimized code `*` (TurboFan) or `+` (Maglev): code that may hold inlined callees. */
export function isOptimizedJs(symbol: string): boolean {
  return /^(?:JS|LazyCompile|Function):\s*[*+]/.test(symbol);
}

interface Node {
  id: number;
  frame: CpuCallFrame;
  key: string;
  children: Map<string, Node>;
  hits: number;
  /** Source line (1-based) → samples, for a node some samples gave a line to. */
  lines?: Map<number, number>;
}

function toProfileNode(n: Node): CpuProfileNode {
  return {
    id: n.id,
    callFrame: n.frame,
    hitCount: n.hits,
    children: [...n.children.values()].map((c) => c.id),
    ...(n.lines ? { positionTicks: [...n.lines].map(([line, ticks]) => ({ line, ticks })) } : {}),
  };
}

export class ProfileBuilder {
  readonly root: Node = {
    id: 1,
    frame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    key: '',
    children: new Map(),
    hits: 0,
  };
  readonly nodes: Node[] = [this.root];
  readonly samples: number[] = [];
  readonly times: number[] = [];
  readonly periods: number[] = [];

  /** One sample, frames leaf first; `line`: the source line of frames[line.index]. */
  add(frames: CpuCallFrame[], time: number, period: number, line?: { index: number; line: number }): void {
    let node = this.root;
    for (let i = frames.length - 1; i >= 0; i--) {
      const f = frames[i];
      const key = `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}`;
      let c = node.children.get(key);
      if (!c) {
        c = { id: this.nodes.length + 1, frame: f, key, children: new Map(), hits: 0 };
        node.children.set(key, c);
        this.nodes.push(c);
      }
      node = c;
      if (line?.index === i) (node.lines ??= new Map()).set(line.line, (node.lines.get(line.line) ?? 0) + 1);
    }
    node.hits++;
    this.samples.push(node.id);
    this.times.push(time);
    this.periods.push(period);
  }

  /**
   * The samples on a real timeline from `startUs` to `endUs` (the sample times' clock): each
   * sample stands for one sampling period ending at its time; a longer gap between two samples
   * (the thread did not run) is an `(idle)` sample, as V8's profiler records a waiting loop.
   */
  buildTimed(startUs: number, endUs: number, periodUs: number): CpuProfile {
    const idle: Node = {
      id: this.nodes.length + 1,
      frame: { functionName: '(idle)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
      key: '(idle)',
      children: new Map(),
      hits: 0,
    };
    this.root.children.set(idle.key, idle);
    this.nodes.push(idle);
    const order = this.samples.map((_, i) => i).sort((a, b) => this.times[a] - this.times[b]);
    const samples: number[] = [];
    const timeDeltas: number[] = [];
    let last = startUs;
    const push = (node: Node, t: number) => {
      samples.push(node.id);
      timeDeltas.push(Math.round(t - last));
      last = t;
    };
    let covered = startUs;
    const byId = this.nodes;
    for (const i of order) {
      const begin = Math.max(startUs, this.times[i] * 1e6 - periodUs);
      if (begin > endUs) break;
      if (begin - covered > periodUs / 2) {
        push(idle, covered);
        idle.hits++;
      }
      push(byId[this.samples[i] - 1], Math.max(begin, covered));
      covered = Math.max(begin, covered) + periodUs;
    }
    if (endUs - covered > periodUs / 2) {
      push(idle, covered);
      idle.hits++;
    }
    const nodes: CpuProfileNode[] = this.nodes.map(toProfileNode);
    return { nodes, startTime: Math.round(startUs), endTime: Math.round(Math.max(endUs, covered)), samples, timeDeltas };
  }

  build(): CpuProfile {
    // One sampling period per sample: the median gap between samples (µs), or perf's period.
    const gaps: number[] = [];
    for (let i = 1; i < this.times.length; i++) if (this.times[i] > this.times[i - 1]) gaps.push((this.times[i] - this.times[i - 1]) * 1e6);
    gaps.sort((a, b) => a - b);
    const interval = gaps.length > 0 ? gaps[gaps.length >> 1] : 10_000;
    const nodes: CpuProfileNode[] = this.nodes.map(toProfileNode);
    const startTime = Math.round((this.times[0] ?? 0) * 1e6);
    const timeDeltas = this.samples.map((_, i) => (i === 0 ? 0 : interval));
    return { nodes, startTime, endTime: startTime + interval * this.samples.length, samples: this.samples, timeDeltas };
  }
}

/** One sample as `perf script` printed it: frames leaf first. */
export interface RawSample {
  comm: string;
  pid?: number;
  tid: number;
  time: number;
  period: number;
  frames: CpuCallFrame[];
  /** Per frame: optimized JS code (may hold inlined callees, see inspector-stacks.ts). */
  optimized: boolean[];
  mapPid?: number;
}

const BINARY = 'it holds binary data (a perf.data file? convert it with `perf script -i perf.data > out.perf`)';
const NO_HEADER = 'no sample header (`<command> <pid> <time>: <event>:`) was found';

/**
 * `perf script` text read line by line, each sample handed on as soon as its frames are read:
 * a long recording is never held whole (see parsePerfScript for the format). A file that shows
 * no sample header in its first 50 lines, or holds binary data, is not perf script output.
 */
export class PerfSampleReader {
  readonly events = new Set<string>();
  skipped = 0;
  samples = 0;
  private current?: RawSample;
  private lineNo = 0;

  /**
   * `maps`: the perf map of a pid when this machine still has it (`hotpath run --native`): JS
   * frames are then named from it rather than by perf, whose lookup mixes up overlapping entries.
   */
  constructor(
    private readonly file: string,
    private readonly onSample: (r: RawSample) => void,
    private readonly maps?: (pid: number) => PerfMap | undefined,
  ) {}

  line(line: string): void {
    this.lineNo++;
    if (line.trim() === '') return this.flush();
    if (line.startsWith('#')) return;
    const current = this.current;
    const f = frameRe.exec(line);
    if (f && current) {
      const map = /\/perf-(\d+)\.map$/.exec(f[3]);
      let symbol = f[2];
      if (map) {
        current.mapPid = Number(map[1]);
        // Named by the newest map entry (perf-map.ts); a caller's address is a return address,
        // one past its call: the byte before it is inside the calling code.
        const address = parseInt(f[1], 16) - (current.frames.length > 0 ? 1 : 0);
        symbol = this.maps?.(current.mapPid)?.nameAt(address) ?? symbol;
      }
      current.frames.push(perfCallFrame(symbol, f[3]));
      current.optimized.push(isOptimizedJs(symbol));
      return;
    }
    const h = headerRe.exec(line);
    if (h) {
      this.flush();
      this.events.add(h[6]);
      // `comm pid/tid` with -F pid,tid; the default output shows the thread id alone.
      this.current = {
        comm: h[1].trim(),
        ...(h[3] !== undefined ? { pid: Number(h[2]) } : {}),
        tid: Number(h[3] ?? h[2]),
        time: Number(h[4]),
        period: h[5] !== undefined ? Number(h[5]) : 0,
        frames: [],
        optimized: [],
      };
      return;
    }
    if (line.includes('\u0000')) throw notPerf(this.file, BINARY);
    this.skipped++;
    if (this.samples === 0 && !current && this.lineNo >= 50) throw notPerf(this.file, NO_HEADER);
  }

  /** The end of the text: the last sample handed on; no sample at all is an error. */
  end(): void {
    this.flush();
    if (this.samples === 0) throw notPerf(this.file, NO_HEADER);
  }

  private flush(): void {
    if (!this.current) return;
    const r = this.current;
    this.current = undefined;
    this.samples++;
    this.onSample(r);
  }
}

/** Feeds `input`'s lines to a reader; the stream is let go on the first error. */
export async function readPerfLines(input: Readable, reader: PerfSampleReader): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) reader.line(line);
    reader.end();
  } finally {
    lines.close();
    input.destroy();
  }
}

/** The samples of `perf script` text, in file order (see parsePerfScript for the format). */
export function readPerfSamples(text: string, file: string): { raw: RawSample[]; skipped: number; events: Set<string> } {
  if (text.includes('\u0000')) throw notPerf(file, BINARY);
  const raw: RawSample[] = [];
  const reader = new PerfSampleReader(file, (r) => raw.push(r));
  for (const line of text.split('\n')) reader.line(line);
  reader.end();
  return { raw, skipped: reader.skipped, events: reader.events };
}

/**
 * Which process each sample belongs to. Without a pid column (perf script's default shows the
 * thread id alone), a thread belongs to the process whose perf map its JS frames come from;
 * threads without JS (libuv's pool, V8's workers) to the JS process of the same name.
 */
export class PerfPids {
  private readonly pidOfTid = new Map<number, number>();
  private readonly pidOfComm = new Map<string, number>();

  see(r: RawSample): void {
    const pid = r.pid ?? r.mapPid;
    if (pid === undefined) return;
    this.pidOfTid.set(r.tid, pid);
    if (r.mapPid !== undefined && !this.pidOfComm.has(r.comm)) this.pidOfComm.set(r.comm, pid);
  }

  pidOf(r: RawSample): number {
    return r.pid ?? this.pidOfTid.get(r.tid) ?? this.pidOfComm.get(r.comm) ?? r.tid;
  }
}

/** perf's samples into one profile per process (samples added once their pids are known). */
export class PerfProfiles {
  private readonly byPid = new Map<number, { comm: string; builder: ProfileBuilder; first: number; last: number; count: number }>();
  readonly events = new Set<string>();
  skippedLines = 0;

  constructor(private readonly pids: PerfPids) {}

  add(r: RawSample): void {
    const pid = this.pids.pidOf(r);
    let p = this.byPid.get(pid);
    if (!p) this.byPid.set(pid, (p = { comm: r.comm, builder: new ProfileBuilder(), first: r.time, last: r.time, count: 0 }));
    const stack =
      r.frames.length > 0 ? r.frames : [{ functionName: '(program)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }];
    if (r.tid !== pid)
      stack.push({ functionName: `[thread ${r.comm} ${r.tid}]`, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 });
    p.builder.add(stack, r.time, r.period);
    p.first = Math.min(p.first, r.time);
    p.last = Math.max(p.last, r.time);
    p.count++;
  }

  result(): PerfScriptResult {
    const processes = [...this.byPid]
      .map(([pid, p]) => ({ pid, comm: p.comm, profile: p.builder.build(), samples: p.count, firstTime: p.first, lastTime: p.last }))
      .sort((a, b) => b.samples - a.samples);
    return { processes, skippedLines: this.skippedLines, events: [...this.events] };
  }
}

export function parsePerfScript(text: string, file: string): PerfScriptResult {
  const { raw, skipped, events } = readPerfSamples(text, file);
  const pids = new PerfPids();
  for (const r of raw) pids.see(r);
  const profiles = new PerfProfiles(pids);
  for (const r of raw) profiles.add(r);
  profiles.skippedLines = skipped;
  for (const e of events) profiles.events.add(e);
  return profiles.result();
}

/**
 * parsePerfScript of a file, read as a stream twice (the pids first, then the profiles): its
 * memory is the profiles', never the text's.
 */
export async function parsePerfScriptFile(path: string, file: string): Promise<PerfScriptResult> {
  const pids = new PerfPids();
  await readPerfLines(createReadStream(path), new PerfSampleReader(file, (r) => pids.see(r)));
  const profiles = new PerfProfiles(pids);
  const reader = new PerfSampleReader(file, (r) => profiles.add(r));
  await readPerfLines(createReadStream(path), reader);
  profiles.skippedLines = reader.skipped;
  for (const e of reader.events) profiles.events.add(e);
  const result = profiles.result();
  await demangleProfiles(result.processes.map((p) => p.profile));
  return result;
}

function notPerf(file: string, why: string): Error {
  return hotpathError('HOTPATH_ERR_PERF_SCRIPT', `${file} is not \`perf script\` output: ${why}`, { details: { file } });
}
