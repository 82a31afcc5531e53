// While the main thread is stalled, samples it through a second inspector session and keeps
// the hottest stacks, so a stall message can say what blocked the loop, not only how long.
// The session is connected when a stall starts and disconnected when it ends (connecting works
// while the main thread is blocked: the inspector reaches it through an interrupt).
import type { Session } from 'node:inspector';
import { endProfilerSession } from '../profiling/coverage-hold.js';
import type { CallSite, StallMessage } from '../protocol.js';

/** Sampling interval of the stall profile, µs (a stall lasts at least 200 ms: 200+ samples). */
export const STALL_SAMPLING_US = 1000;
const MAX_STACKS = 3;
const MAX_FRAMES = 12;
/** Stacks with a smaller share of the stall's samples are noise (the agent's own timers, GC callbacks). */
const MIN_SHARE = 0.05;

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number; scriptId: string | number };
  hitCount?: number;
  children?: number[];
  positionTicks?: { line: number; ticks: number }[];
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
}
type Cause = NonNullable<StallMessage['cause']>;

export class StallCause {
  private session: Session | undefined;

  /**
   * `connect` opens a new session connected to the watched thread; `onBusy` hears when one is
   * connected (true) and when it is gone (false); `onProfile` gets each stall's profile nodes
   * (the scripts they sampled get function ranges at the end of the run).
   */
  constructor(
    private readonly connect: () => Session,
    private readonly onBusy?: (busy: boolean) => void,
    private readonly onProfile?: (nodes: readonly ProfileNode[]) => void,
  ) {}

  start(): void {
    if (this.session !== undefined) return;
    let session: Session;
    try {
      session = this.connect();
    } catch {
      return;
    }
    this.session = session;
    this.onBusy?.(true);
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: STALL_SAMPLING_US });
    session.post('Profiler.start');
  }

  stop(done: (cause: Cause | undefined) => void): void {
    const session = this.session;
    if (session === undefined) return done(undefined);
    this.session = undefined;
    session.post('Profiler.stop', (err, result) => {
      endProfilerSession(session);
      this.onBusy?.(false);
      if (err || !result?.profile) return done(undefined);
      const profile = result.profile as unknown as Profile;
      try {
        this.onProfile?.(profile.nodes);
      } catch {
        // Only an aid to the end-of-run capture.
      }
      done(hottestStacks(profile));
    });
  }
}

/** The MAX_STACKS leaf nodes with most samples, each with its stack (leaf first). */
export function hottestStacks(profile: Profile): Cause | undefined {
  const samples = profile.samples ?? [];
  if (samples.length === 0) return undefined;
  const counts = new Map<number, number>();
  for (const id of samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const top = [...counts]
    .filter(([id]) => isCode(byId.get(id)))
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_STACKS);
  const causes = top
    .filter(([, n]) => n / samples.length >= MIN_SHARE)
    .map(([id, n]) => {
      const line = hottestLine(byId.get(id));
      return {
        share: Math.round((n / samples.length) * 1000) / 1000,
        stack: stackOf(id, byId, parent),
        ...(line !== undefined ? { line } : {}),
      };
    });
  return causes.length > 0 ? causes : undefined;
}

/** The node's line with the most ticks (1-based, as V8 gives it). */
function hottestLine(n: ProfileNode | undefined): number | undefined {
  let best: { line: number; ticks: number } | undefined;
  for (const t of n?.positionTicks ?? []) if (!best || t.ticks > best.ticks) best = t;
  return best?.line;
}

function isCode(n: ProfileNode | undefined): boolean {
  return n !== undefined && !['(root)', '(program)', '(idle)', '(garbage collector)'].includes(n.callFrame.functionName);
}

function stackOf(leaf: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): CallSite[] {
  const stack: CallSite[] = [];
  for (let id: number | undefined = leaf; id !== undefined && stack.length < MAX_FRAMES; id = parent.get(id)) {
    const n = byId.get(id);
    if (n === undefined || n.callFrame.functionName === '(root)') break;
    const f = n.callFrame;
    stack.push({ function: f.functionName || '(anonymous)', file: f.url, line: f.lineNumber + 1, column: f.columnNumber + 1 });
  }
  return stack;
}
