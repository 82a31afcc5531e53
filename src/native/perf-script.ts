// `perf script` output (Linux perf, as in Netflix's "Node.js in flames" workflow: node run with
// --perf-basic-prof, `perf record -g`, `perf script`) into CPU profiles of hotpath's model:
// one per process, kernel, libuv, V8 C++ and JS frames in one stack.
//
// A sample is a header line `<comm> <pid>[/<tid>] [<cpu>] <time>: [<period>] <event>:` and its
// frames, leaf first, one per line: `<address> <symbol>[+<offset>] (<object>)`. JS frames come
// from /tmp/perf-<pid>.map, named by V8: `JS:*fib /app/x.js:3`, `LazyCompile:~f /app/x.js:3:10`
// (older V8), `Builtin:ArrayMap`... Samples of other threads than the main one (libuv's pool,
// V8's workers) sit under a `[thread <comm>]` frame. Each sample weighs one sampling period.

import { basename, isAbsolute } from 'node:path';
import { hotpathError } from '../errors.js';
import type { CpuCallFrame, CpuProfile, CpuProfileNode } from '../profile/cpu-profile.js';
import { scriptUrl } from './ticks-to-cpuprofile.js';
import { KERNEL_SUFFIX } from '../profile/classify-frame.js';

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
  return { functionName: sym, ...none };
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

/** The samples of `perf script` text, in file order (see parsePerfScript for the format). */
export function readPerfSamples(text: string, file: string): { raw: RawSample[]; skipped: number; events: Set<string> } {
  if (text.includes('\u0000'))
    throw notPerf(file, 'it holds binary data (a perf.data file? convert it with `perf script -i perf.data > out.perf`)');
  const events = new Set<string>();
  const raw: RawSample[] = [];
  let skipped = 0;
  let current: RawSample | undefined;
  const flush = () => {
    if (current) raw.push(current);
    current = undefined;
  };
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (line.startsWith('#')) continue;
    const f = frameRe.exec(line);
    if (f && current) {
      current.frames.push(perfCallFrame(f[2], f[3]));
      current.optimized.push(isOptimizedJs(f[2]));
      const map = /\/perf-(\d+)\.map$/.exec(f[3]);
      if (map) current.mapPid = Number(map[1]);
      continue;
    }
    const h = headerRe.exec(line);
    if (h) {
      flush();
      events.add(h[6]);
      // `comm pid/tid` with -F pid,tid; the default output shows the thread id alone.
      current = {
        comm: h[1].trim(),
        ...(h[3] !== undefined ? { pid: Number(h[2]) } : {}),
        tid: Number(h[3] ?? h[2]),
        time: Number(h[4]),
        period: h[5] !== undefined ? Number(h[5]) : 0,
        frames: [],
        optimized: [],
      };
      continue;
    }
    skipped++;
    if (raw.length === 0 && !current && lineNo >= 50) break;
  }
  flush();
  if (raw.length === 0) throw notPerf(file, 'no sample header (`<command> <pid> <time>: <event>:`) was found');
  return { raw, skipped, events };
}

export function parsePerfScript(text: string, file: string): PerfScriptResult {
  const { raw, skipped, events } = readPerfSamples(text, file);
  // Without a pid column, a thread belongs to the process whose perf map its JS frames come
  // from; threads without JS (libuv's pool, V8's workers) to the JS process of the same name.
  const pidOfTid = new Map<number, number>();
  const pidOfComm = new Map<string, number>();
  for (const r of raw) {
    const pid = r.pid ?? r.mapPid;
    if (pid !== undefined) {
      pidOfTid.set(r.tid, pid);
      if (r.mapPid !== undefined && !pidOfComm.has(r.comm)) pidOfComm.set(r.comm, pid);
    }
  }
  const byPid = new Map<number, { comm: string; builder: ProfileBuilder; first: number; last: number; count: number }>();
  for (const r of raw) {
    const pid = r.pid ?? pidOfTid.get(r.tid) ?? pidOfComm.get(r.comm) ?? r.tid;
    let p = byPid.get(pid);
    if (!p) byPid.set(pid, (p = { comm: r.comm, builder: new ProfileBuilder(), first: r.time, last: r.time, count: 0 }));
    const stack =
      r.frames.length > 0 ? r.frames : [{ functionName: '(program)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }];
    if (r.tid !== pid)
      stack.push({ functionName: `[thread ${r.comm} ${r.tid}]`, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 });
    p.builder.add(stack, r.time, r.period);
    p.first = Math.min(p.first, r.time);
    p.last = Math.max(p.last, r.time);
    p.count++;
  }
  const processes = [...byPid]
    .map(([pid, p]) => ({ pid, comm: p.comm, profile: p.builder.build(), samples: p.count, firstTime: p.first, lastTime: p.last }))
    .sort((a, b) => b.samples - a.samples);
  return { processes, skippedLines: skipped, events: [...events] };
}

function notPerf(file: string, why: string): Error {
  return hotpathError('HOTPATH_ERR_PERF_SCRIPT', `${file} is not \`perf script\` output: ${why}`, { details: { file } });
}
