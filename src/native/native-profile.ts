// The samples `perf record` took of one target process during the load window, as CPU
// profiles of hotpath's model (the same frames `hotpath import` makes, perf-script.ts):
//  - its main thread (the event loop) on V8's clock (CLOCK_MONOTONIC µs, `perf record -k mono`),
//    with real sample times and the stretches it did not run as `(idle)`, so the run's views
//    window it, weigh it and measure the loop's utilization as they do the inspector's profile;
//  - its other threads (libuv's pool, V8's GC and compiler workers, the agent's worker) in one
//    profile, each under a `[thread <comm> <tid>]` frame: work done off the loop.
// Given the inspector's profile of the same main thread, each main-thread sample takes the
// callees V8 inlined and the source line from it (inspector-stacks.ts).

import type { CpuProfile } from '../profile/cpu-profile.js';
import { ProfileBuilder, type RawSample } from './perf-script.js';
import { InspectorStacks } from './inspector-stacks.js';

export interface NativeProcessProfiles {
  pid: number;
  /** The main thread over [startUs, endUs]; undefined without a sample of it. */
  main?: CpuProfile;
  mainSamples: number;
  /** The other threads, uniform weights (one period per sample); undefined without samples. */
  threads?: CpuProfile;
  /** Samples per other thread name (`libuv-worker`, `V8 DefaultWorke`...). */
  threadSamples: Record<string, number>;
  /** Main-thread samples with at least one JS frame (from the perf map). */
  jsSamples: number;
  /** Main-thread JS samples an inspector sample agreed with, those it gave inlined frames and a line. */
  inspector?: { matched: number; inlined: number; lined: number };
}

export interface NativeWindow {
  startUs: number;
  endUs: number;
  periodUs: number;
  /** The inspector's profile of the same main thread (its inlined callees and lines). */
  inspector?: CpuProfile;
}

/** One process's samples, added one at a time as perf script prints them (nothing else kept). */
export class NativeProcessBuilder {
  private readonly stacks?: InspectorStacks;
  private readonly inspector = { matched: 0, inlined: 0, lined: 0 };
  private readonly main = new ProfileBuilder();
  private readonly others = new ProfileBuilder();
  private readonly threadSamples: Record<string, number> = {};
  private mainSamples = 0;
  private jsSamples = 0;
  private otherCount = 0;

  constructor(
    readonly pid: number,
    private readonly o: NativeWindow,
  ) {
    if (o.inspector) this.stacks = new InspectorStacks(o.inspector);
  }

  add(r: RawSample): void {
    const { pid, o } = this;
    // perf attached before the load and may sample a moment after it: the window's samples only.
    if ((r.pid ?? r.mapPid) !== pid || r.time * 1e6 < o.startUs || r.time * 1e6 - o.periodUs > o.endUs) return;
    const frames =
      r.frames.length > 0 ? [...r.frames] : [{ functionName: '(program)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }];
    if (r.tid === pid) {
      const e = this.stacks?.enrich(frames, r.optimized, r.time * 1e6);
      this.main.add(e?.frames ?? frames, r.time, r.period, e?.line);
      this.mainSamples++;
      if (frames.some((f) => f.scriptId === '1')) this.jsSamples++;
      if (e?.matched) this.inspector.matched++;
      if (e?.inserted) this.inspector.inlined++;
      if (e?.line) this.inspector.lined++;
    } else {
      frames.push({ functionName: `[thread ${r.comm} ${r.tid}]`, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 });
      this.others.add(frames, r.time, r.period);
      this.threadSamples[r.comm] = (this.threadSamples[r.comm] ?? 0) + 1;
      this.otherCount++;
    }
  }

  result(): NativeProcessProfiles {
    const { o } = this;
    return {
      pid: this.pid,
      ...(this.mainSamples > 0 ? { main: this.main.buildTimed(o.startUs, o.endUs, o.periodUs) } : {}),
      mainSamples: this.mainSamples,
      ...(this.otherCount > 0 ? { threads: this.others.build() } : {}),
      threadSamples: this.threadSamples,
      jsSamples: this.jsSamples,
      ...(this.stacks ? { inspector: this.inspector } : {}),
    };
  }
}

/** The profiles of `pid` from samples already read. */
export function nativeProcessProfiles(raw: readonly RawSample[], pid: number, o: NativeWindow): NativeProcessProfiles {
  const b = new NativeProcessBuilder(pid, o);
  for (const r of raw) b.add(r);
  return b.result();
}
