// Gives the self time of inlined functions back to them. V8's CPU profiler charges a sample
// taken in optimized code to the outermost function of that code: when TurboFan or Maglev
// inlined `issueSession` → `deriveToken` into the route handler, the handler shows all of
// deriveToken's time as its own. Each node's positionTicks still hold the line of every tick,
// and that line is the inlined callee's. With the function ranges of the script (what V8
// reported at the end of the run: src/agent/profiling/function-ranges.ts), a tick line that lies
// in another function than the node's own is that function's, and the profile gets a node for
// it under the caller (through the functions between them, when the profile saw those calls
// un-inlined). A node's samples are spread over it and its new callees in proportion to their
// line ticks (V8 does not record which sample had which line, only the counts).
//
// V8 keeps the line of a tick, not its file: a callee inlined from another file puts lines of
// that file on the caller's node. So each line has candidates: the node's own function, the
// innermost function of its script on that line (a closure of the node, or another function
// that ran or that the node calls), and the functions of other scripts the profile saw the node
// call. Kept conservative, because a wrong name is worse than the caller's:
// - one candidate other than the node's own takes the line;
// - among several (the node's own code could be on that line too), the line goes to the one
//   function whose own nodes, when it ran un-inlined, were sampled on that line and on the
//   node's other lines too (the shape of a hot loop, not one line number in common);
// - otherwise, and on a line two unrelated functions share, the line stays with the node.

import type { CpuCallFrame, CpuProfile, CpuProfileNode } from './cpu-profile.js';
import { indexNodes } from './raw-index.js';
import { contains, push, scriptFunctions, type Fn, type FunctionRanges, type ScriptFunctions } from './script-functions.js';

const fnKey = (f: Fn) => `${f.url}\u0000${f.sl}\u0000${f.sc}`;
/** How far below a function its callees are looked for (a path of inlined callers). */
const MAX_CALL_DEPTH = 8;

/** A function's callees as the profile saw them: the frames down to each, and their keys by script. */
interface Calls {
  paths: Map<string, CpuCallFrame[]>;
  byUrl: Map<string, Set<string>>;
}

const frameKey = (cf: CpuCallFrame) => `${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}\u0000${cf.functionName}`;

/** What one node's ticks turn into: lines kept, and lines per inlined callee (with the path to it). */
interface Plan {
  own: { line: number; ticks: number }[];
  moved: { chain: CpuCallFrame[]; lines: { line: number; ticks: number }[] }[];
}

/** The profile with inlined functions' ticks under nodes of their own; the same object when nothing moved. */
export function expandInlinedFrames(profile: CpuProfile, ranges: FunctionRanges | undefined): CpuProfile {
  if (!ranges || Object.keys(ranges).length === 0) return profile;
  const scriptOf = (url: string): ScriptFunctions | undefined => scriptFunctions(ranges, url);
  const nodes = profile.nodes;
  const { children } = indexNodes(profile);

  // Each function the profile saw (by its range when known), its call frame and its nodes.
  const fnOfNode = nodes.map((n) => scriptOf(n.callFrame.url)?.at(n.callFrame.lineNumber, n.callFrame.columnNumber));
  const keys = nodes.map((n, i) => {
    const f = fnOfNode[i];
    return f ? fnKey(f) : frameKey(n.callFrame);
  });
  const frameOfKey = new Map<string, CpuCallFrame>();
  const groups = new Map<string, number[]>();
  nodes.forEach((n, i) => {
    if (!frameOfKey.has(keys[i])) frameOfKey.set(keys[i], n.callFrame);
    if (fnOfNode[i]) push(groups, keys[i], i);
  });
  /** What a function's nodes were seen calling (at most MAX_CALL_DEPTH below), remembered per function. */
  const seenCalls = new Map<string, Calls>();
  const callsOf = (key: string, from: number[] = groups.get(key) ?? []): Calls => {
    let calls = seenCalls.get(key);
    if (calls) return calls;
    calls = { paths: new Map(), byUrl: new Map() };
    const seen = new Set<number>();
    let frontier = from.map((i) => ({ i, path: [] as CpuCallFrame[] }));
    for (let depth = 0; depth < MAX_CALL_DEPTH && frontier.length > 0; depth++) {
      const next: typeof frontier = [];
      for (const { i, path } of frontier) {
        for (const c of children[i]) {
          if (seen.has(c)) continue;
          seen.add(c);
          const k = keys[c];
          const to = [...path, nodes[c].callFrame];
          if (k !== key && !calls.paths.has(k)) {
            calls.paths.set(k, to);
            const url = nodes[c].callFrame.url;
            let set = calls.byUrl.get(url);
            if (!set) calls.byUrl.set(url, (set = new Set()));
            set.add(k);
          }
          next.push({ i: c, path: to });
        }
      }
      frontier = next;
    }
    seenCalls.set(key, calls);
    return calls;
  };

  // The lines each function was sampled on when it ran un-inlined (a node of its own).
  const standalone = new Map<string, Map<number, number>>();
  nodes.forEach((n, i) => {
    const f = fnOfNode[i];
    if (!f || !n.positionTicks) return;
    let lines = standalone.get(fnKey(f));
    if (!lines) standalone.set(fnKey(f), (lines = new Map()));
    for (const t of n.positionTicks) if (t.line - 1 >= f.sl && t.line - 1 <= f.el) lines.set(t.line, (lines.get(t.line) ?? 0) + t.ticks);
  });

  const plans = new Map<number, Plan>();
  nodes.forEach((n, i) => {
    const own = fnOfNode[i];
    if (!own && n.hitCount && n.positionTicks?.length && n.callFrame.url.startsWith('node:')) {
      const plan = coreNodePlan(n, callsOf(`${keys[i]}\u0000${i}`, [i]), scriptOf, frameOfKey);
      if (plan) plans.set(i, plan);
      return;
    }
    if (!own || !n.hitCount || !n.positionTicks?.length) return;
    const calls = callsOf(keys[i]);
    const ticked = new Set(n.positionTicks.map((t) => t.line));
    const ctx: LineContext = { own, script: scriptOf(own.url)!, scriptOf, calls, standalone: (f) => standalone.get(fnKey(f)), ticked };
    const plan: Plan = { own: [], moved: [] };
    const byTarget = new Map<string, Plan['moved'][number]>();
    for (const tick of n.positionTicks) {
      const target = inlinedAt(tick.line, ctx);
      if (!target) {
        plan.own.push(tick);
        continue;
      }
      const k = fnKey(target);
      let m = byTarget.get(k);
      if (!m) {
        const chain = calls.paths.get(k) ?? [frameOfKey.get(k) ?? syntheticFrame(target, n.callFrame)];
        byTarget.set(k, (m = { chain, lines: [] }));
        plan.moved.push(m);
      }
      m.lines.push(tick);
    }
    if (plan.moved.length > 0) plans.set(i, plan);
  });
  return plans.size === 0 ? profile : apply(profile, plans);
}

/**
 * Node's own functions have no ranges (the agent reports the app's scripts), but one that runs
 * the app's callbacks (the tick queue's processTicksAndRejections, a timer list) can have one
 * inlined: its node then holds ticks on lines of the app's files. A tick on a line before the
 * node's function starts is not its own code; it goes to the one function the node was seen
 * calling (un-inlined, elsewhere in the profile) whose code is on that line, else it stays.
 */
function coreNodePlan(
  n: CpuProfileNode,
  calls: Calls,
  scriptOf: (url: string) => ScriptFunctions | undefined,
  frameOfKey: Map<string, CpuCallFrame>,
): Plan | undefined {
  const plan: Plan = { own: [], moved: [] };
  const byTarget = new Map<string, Plan['moved'][number]>();
  for (const tick of n.positionTicks ?? []) {
    const l0 = tick.line - 1;
    const others: Fn[] = [];
    if (l0 < n.callFrame.lineNumber) {
      for (const [url, called] of calls.byUrl) {
        const other = scriptOf(url)?.onLine(l0);
        if (other && other !== 'shared' && called.has(fnKey(other))) others.push(other);
      }
    }
    if (others.length !== 1) {
      plan.own.push(tick);
      continue;
    }
    const k = fnKey(others[0]);
    let m = byTarget.get(k);
    if (!m) {
      const chain = calls.paths.get(k) ?? [frameOfKey.get(k) ?? syntheticFrame(others[0], n.callFrame)];
      byTarget.set(k, (m = { chain, lines: [] }));
      plan.moved.push(m);
    }
    m.lines.push(tick);
  }
  return plan.moved.length > 0 ? plan : undefined;
}

/** A frame for a function the profile never saw on its own: where V8 said it starts. */
function syntheticFrame(f: Fn, caller: CpuCallFrame): CpuCallFrame {
  return { functionName: f.name, scriptId: f.url === caller.url ? caller.scriptId : '0', url: f.url, lineNumber: f.sl, columnNumber: f.sc };
}

/** What deciding a line of one node needs. */
interface LineContext {
  own: Fn;
  script: ScriptFunctions;
  scriptOf: (url: string) => ScriptFunctions | undefined;
  /** What the node's function was seen calling. */
  calls: Calls;
  /** Lines (1-based) and ticks of `f`'s own nodes. */
  standalone: (f: Fn) => Map<number, number> | undefined;
  /** Lines (1-based) the node has ticks on. */
  ticked: Set<number>;
}

/**
 * The function a tick on `line` (1-based) of the node ran in, when it is not the node's own.
 * The functions whose code is on that line: the node's own; in its script, the innermost one
 * (a closure of the node, or another function that ran or that the node calls); in other
 * scripts, the ones the node calls. One candidate that is not the node's own wins. Among
 * several, the one function whose own nodes were sampled on that line, and on the node's other
 * lines too, wins; otherwise the line stays with the node.
 */
function inlinedAt(line: number, ctx: LineContext): Fn | undefined {
  const { own, script } = ctx;
  const l0 = line - 1;
  const onLine = script.onLine(l0);
  if (onLine === 'shared') return undefined;
  let ownCandidate = false;
  const others: Fn[] = [];
  if (onLine === own) ownCandidate = true;
  else if (onLine && contains(own, onLine)) {
    // A closure of the node: the node's own code may share its first and last line.
    others.push(onLine);
    if (l0 === onLine.sl || l0 === onLine.el) ownCandidate = true;
  } else if (onLine && !contains(onLine, own) && (onLine.count > 0 || ctx.calls.paths.has(fnKey(onLine)))) others.push(onLine);
  // V8 keeps the line of a callee inlined from another file, not the file.
  for (const [url, called] of ctx.calls.byUrl) {
    if (url === own.url) continue;
    const other = ctx.scriptOf(url)?.onLine(l0);
    if (other && other !== 'shared' && called.has(fnKey(other))) others.push(other);
  }
  if (others.length === 0) return undefined;
  if (!ownCandidate && others.length === 1) return others[0];
  const evidenced = others.filter((f) => sampledLike(f, line, ctx));
  return evidenced.length === 1 ? evidenced[0] : undefined;
}

/**
 * Whether `f`, run un-inlined, was sampled on `line`, and on enough of its other sampled lines
 * that the node has ticks on too (two, or its only one): a single line number in common is a
 * coincidence, the shape of a loop is not.
 */
function sampledLike(f: Fn, line: number, ctx: LineContext): boolean {
  const lines = ctx.standalone(f);
  if (!lines?.has(line)) return false;
  let shared = 0;
  for (const l of lines.keys()) if (ctx.ticked.has(l)) shared++;
  return shared >= Math.min(2, lines.size);
}

/** Adds the planned nodes and moves each planned node's samples to them, in tick proportion. */
function apply(profile: CpuProfile, plans: Map<number, Plan>): CpuProfile {
  const nodes: CpuProfileNode[] = profile.nodes.slice();
  let nextId = nodes.reduce((m, n) => Math.max(m, n.id), 0) + 1;
  /** Per planned node id: the ids its samples go to and their weights (own first). */
  const targets = new Map<number, { ids: number[]; weights: number[]; sum: number; assigned: number[]; seen: number }>();
  for (const [i, plan] of plans) {
    const node: CpuProfileNode = { ...nodes[i], children: [...(nodes[i].children ?? [])] };
    nodes[i] = node;
    const ids = [node.id];
    const weights = [plan.own.reduce((s, t) => s + t.ticks, 0)];
    // The chains under this node as a trie: shared intermediate callers become one node.
    const under = new Map<string, CpuProfileNode>();
    for (const m of plan.moved) {
      let at = node;
      let key = '';
      for (const cf of m.chain) {
        key += `\u0001${frameKey(cf)}`;
        let child = under.get(key);
        if (!child) {
          child = { id: nextId++, callFrame: cf, hitCount: 0, children: [] };
          under.set(key, child);
          nodes.push(child);
          at.children!.push(child.id);
        }
        at = child;
      }
      at.positionTicks = [...(at.positionTicks ?? []), ...m.lines];
      const ticks = m.lines.reduce((s, t) => s + t.ticks, 0);
      ids.push(at.id);
      weights.push(ticks);
    }
    node.positionTicks = plan.own;
    targets.set(node.id, { ids, weights, sum: weights.reduce((a, b) => a + b, 0), assigned: ids.map(() => 0), seen: 0 });
  }
  const samples = profile.samples.slice();
  for (let s = 0; s < samples.length; s++) {
    const t = targets.get(samples[s]);
    if (!t) continue;
    // The target furthest behind its share so far: an even, deterministic spread.
    const n = ++t.seen;
    let best = 0;
    let bestLag = -Infinity;
    for (let k = 0; k < t.ids.length; k++) {
      const lag = (t.weights[k] / t.sum) * n - t.assigned[k];
      if (lag > bestLag) {
        bestLag = lag;
        best = k;
      }
    }
    t.assigned[best]++;
    samples[s] = t.ids[best];
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const t of targets.values())
    t.ids.forEach((id, k) => {
      byId.get(id)!.hitCount = t.assigned[k];
    });
  return { ...profile, nodes, samples };
}
