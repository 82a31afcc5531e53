// Resolved ticks as a V8 CPU profile (`.cpuprofile`), the input of hotpath's profile model
// (docs/profile-model.md), so the call tree, the analyzers, report.html and every export read
// a tick log as they read a run. One sample per tick, weighted by the time to the next tick.
//
// Frames: JS functions get their URL, line and column from the name V8 logged
// (`fib /app/server.js:3:13`); builtins, C++ symbols and libraries have no URL (the model's
// `native` kind, charged to the nearest app frame, like the inspector's natives); RegExp code
// keeps V8's `RegExp: <source>` name. Ticks in the GC or IDLE VM state become the inspector's
// `(garbage collector)` and `(idle)`; a tick with no named frame is `(program)`. Tiers of one
// function (`~`, `^`, `*`) are one frame, as in the inspector's profiles.

import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CpuCallFrame, CpuProfile, CpuProfileNode } from '../profile/cpu-profile.js';
import { VM_STATE, type ProfEntry, type ResolvedTicks } from './resolve-ticks.js';
import { forEachNameStack } from './prof-statistics.js';

const locatedName = /^(.*) (\S+):(\d+):(\d+)$/;

/** The URL of a script name as V8 logs it: paths become file:// URLs, `node:` stays. */
export function scriptUrl(name: string): string {
  return isAbsolute(name) ? pathToFileURL(name).href : name;
}

/** A C++ symbol without its ELF version (`epoll_pwait@@GLIBC_2.6` → `epoll_pwait`). */
export const cppName = (name: string): string => name.replace(/@@?[A-Za-z0-9_.]+$/, '');

export function callFrameOf(e: ProfEntry, scriptIds: Map<string, number>): CpuCallFrame {
  if (e.type === 'JS' && e.code) {
    const m = locatedName.exec(e.code.name);
    if (m) {
      const url = scriptUrl(m[2]);
      let id = scriptIds.get(url);
      if (id === undefined) scriptIds.set(url, (id = scriptIds.size + 1));
      return {
        functionName: m[1],
        scriptId: String(id),
        url,
        lineNumber: Math.max(0, Number(m[3]) - 1),
        columnNumber: Math.max(0, Number(m[4]) - 1),
      };
    }
    return { functionName: e.code.name.trim(), scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
  }
  if (e.type === 'CODE' && e.code) {
    const name = e.code.type === 'RegExp' ? `RegExp: ${e.code.name}` : `${e.code.type}: ${e.code.name}`;
    return { functionName: name, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
  }
  return { functionName: e.type === 'CPP' ? cppName(e.name) : e.name, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
}

interface Node {
  id: number;
  frame: number;
  children: Map<number, Node>;
  hits: number;
}

/** A gap this many intervals long is a stretch without samples. */
const GAP_INTERVALS = 4;
const PROGRAM = -1;
const GC = -2;
const IDLE = -3;

export function ticksToCpuProfile(r: ResolvedTicks): CpuProfile {
  const scriptIds = new Map<string, number>();
  // Intern frames: entries of one function (several tiers) share one frame.
  const frames: CpuCallFrame[] = [];
  const frameIndex = new Map<string, number>();
  const entryFrame = new Int32Array(r.entries.length).fill(-100);
  const special: Record<number, CpuCallFrame> = {
    [PROGRAM]: { functionName: '(program)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    [GC]: { functionName: '(garbage collector)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    [IDLE]: { functionName: '(idle)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
  };
  const frameOf = (id: number): number => {
    if (entryFrame[id] !== -100) return entryFrame[id];
    const cf = callFrameOf(r.entries[id], scriptIds);
    const key = `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}`;
    let f = frameIndex.get(key);
    if (f === undefined) {
      f = frames.length;
      frames.push(cf);
      frameIndex.set(key, f);
    }
    entryFrame[id] = f;
    return f;
  };
  const deoptByName = new Map(r.deopts.map((d) => [d.name, d.lastReason]));
  const root: Node = { id: 1, frame: -100, children: new Map(), hits: 0 };
  const all: Node[] = [root];
  const nodeFrame = new Map<Node, CpuCallFrame>();
  const child = (parent: Node, frame: number): Node => {
    let c = parent.children.get(frame);
    if (!c) {
      c = { id: all.length + 1, frame, children: new Map(), hits: 0 };
      parent.children.set(frame, c);
      all.push(c);
      nodeFrame.set(c, frame < 0 ? special[frame] : frames[frame]);
    }
    return c;
  };
  const samples = new Array<number>(r.times.length);
  forEachNameStack(r, (stack, length, t) => {
    const state = r.states[t];
    let node: Node;
    if (state === VM_STATE.GC) node = child(root, GC);
    else if (state === VM_STATE.IDLE) node = child(root, IDLE);
    else {
      node = root;
      let named = 0;
      for (let i = length - 1; i >= 0; i--) {
        if (stack[i] < 0) continue;
        node = child(node, frameOf(stack[i]));
        named++;
      }
      if (named === 0) node = child(root, PROGRAM);
    }
    node.hits++;
    samples[t] = node.id;
  });
  // Each tick weighs one interval (the median gap), as each counts 1 in --prof-process, so the
  // report's shares are the ticks' shares. V8's sampler skips ticks while the thread sleeps: a
  // gap far longer than the interval before an idle tick is an (idle) stretch. Other long gaps
  // (the sampler not scheduled on a busy machine) carry no sample and are left out.
  const times = r.times;
  const gaps: number[] = [];
  for (let i = 1; i < times.length; i++) gaps.push(Math.max(0, times[i] - times[i - 1]));
  gaps.sort((a, b) => a - b);
  const interval = gaps.length > 0 ? Math.max(1, gaps[gaps.length >> 1]) : 1000;
  const longGap = interval * GAP_INTERVALS;
  const outSamples: number[] = [];
  const timeDeltas: number[] = [];
  let clock = 0;
  for (let i = 0; i < times.length; i++) {
    const gap = i === 0 ? 0 : Math.max(0, times[i] - times[i - 1]);
    if (i > 0 && gap > longGap && r.states[i] === VM_STATE.IDLE) {
      const filler = child(root, IDLE);
      filler.hits++;
      outSamples.push(filler.id);
      timeDeltas.push(interval);
      timeDeltas.push(gap - interval);
      clock += gap;
    } else {
      const step = i === 0 ? 0 : interval;
      timeDeltas.push(step);
      clock += step;
    }
    outSamples.push(samples[i]);
  }
  const startTime = times[0] ?? 0;
  const nodes: CpuProfileNode[] = all.map((n) => {
    const cf = n === root ? { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 } : nodeFrame.get(n)!;
    const reason = n.frame >= 0 ? deoptByName.get(deoptKey(cf)) : undefined;
    return {
      id: n.id,
      callFrame: cf,
      hitCount: n.hits,
      children: [...n.children.values()].map((c) => c.id),
      ...(reason ? { deoptReason: reason } : {}),
    };
  });
  return { nodes, startTime, endTime: startTime + clock + interval, samples: outSamples, timeDeltas };
}

/** The display name V8 gives a function (what deopts are keyed by). */
function deoptKey(cf: CpuCallFrame): string {
  if (cf.url === '') return cf.functionName;
  const loc = cf.url.startsWith('file://') ? decodeURIComponent(cf.url.slice(7)) : cf.url;
  return `${cf.functionName || '<anonymous>'} ${loc}:${cf.lineNumber + 1}:${cf.columnNumber + 1}`;
}
