// The route and the app function that requests left unanswered went through, from what the agent
// noted when their connections closed with them still waiting (SampleMessage.unanswered,
// collectors/unanswered-routes.ts). The handler's location is V8's (script id, line, column; mapped
// to the source the app wrote through the run's source maps, as tsx compiles in memory):
// the CPU profile of the same thread gives the script's URL; when the profile never sampled that
// script (a handler that hangs after a few microseconds of work), the function ranges the agent
// wrote for it at the end of the run do: the script whose function of that name starts on
// that line. An anonymous handler that only
// hands the request to one app function (`(req, res) => handle(req, res)`) names that function,
// as the CPU profile shows it called from there.
import type { ThreadTelemetry, RunData } from '../../run-dir/run-data.js';
import type { UnansweredRoute } from '../../agent/protocol.js';
import type { CpuProfile, CpuProfileNode } from '../../profile/cpu-profile.js';
import type { Culprit } from '../finding.js';
import { notedTotal, unansweredWindows } from './unanswered-windows.js';
import { cpuViewOf } from './cpu-view.js';
import { relativeFile } from './culprit.js';
import { runResolver } from '../../profile/run-source-maps.js';
import { urlToPath } from '../../profile/classify-frame.js';

/** An anonymous handler is followed into its one app callee when that callee holds at least this share of its app callees' samples. */
export const HANDLER_CALLEE_MIN_SHARE = 0.9;

export interface UnansweredRouteView {
  entry: UnansweredRoute;
  /**
   * Unanswered requests the agents noted over every target thread, in the load `entry` counts
   * (signals/unanswered-windows.ts): the measured load's, or the extra load's when the agents
   * noted none of the measured load's; both together in a run that does not tell them apart.
   */
  total: number;
  /** Which load `entry` and `total` count; undefined when the run does not tell them apart. */
  window?: 'measured' | 'extra';
  /** When `window` is 'measured': the requests the extra load after it left on the same route. */
  extraOnRoute?: number;
  culprit?: Culprit;
  /** The anonymous handler the culprit was called from, when followed into it. */
  via?: Culprit;
}

/** The route with the most unanswered requests, its handler as a culprit when it is app code. */
export function unansweredRoute(run: RunData): UnansweredRouteView | undefined {
  const { threads, split } = unansweredWindows(run);
  const measured = threads.some((t) => t.measured.length > 0);
  const routesOf = (t: (typeof threads)[number]) => (measured ? t.measured : t.extra);
  let best: { entry: UnansweredRoute; thread: ThreadTelemetry } | undefined;
  let total = 0;
  for (const t of threads) {
    total += notedTotal(routesOf(t));
    for (const entry of routesOf(t)) if (best === undefined || entry.count > best.entry.count) best = { entry, thread: t.thread };
  }
  if (best === undefined) return undefined;
  const located = locate(run, best.thread, best.entry);
  if (!split) return { entry: best.entry, total, ...located };
  const same = (r: UnansweredRoute) => r.method === best.entry.method && r.route === best.entry.route;
  const extraOnRoute = measured ? notedTotal(threads.flatMap((t) => t.extra.filter(same))) : 0;
  return {
    entry: best.entry,
    total,
    window: measured ? 'measured' : 'extra',
    ...(extraOnRoute > 0 ? { extraOnRoute } : {}),
    ...located,
  };
}

interface Fn {
  name: string;
  url: string;
  line: number;
  column: number;
}

function locate(run: RunData, thread: ThreadTelemetry, entry: UnansweredRoute): { culprit?: Culprit; via?: Culprit } {
  const h = entry.handler;
  const view = cpuViewOf(run);
  if (h === undefined || view === undefined || view.ref.pid !== thread.pid || view.ref.threadId !== thread.threadId) return {};
  const nodes = view.profile.nodes;
  const url =
    nodes.find((n) => String(n.callFrame.scriptId) === h.scriptId && n.callFrame.url !== '')?.callFrame.url ??
    run.scriptUrls?.[`${thread.pid}:${thread.threadId}:${h.scriptId}`] ??
    urlByRanges(run, h);
  if (url === undefined || !isAppUrl(url)) return {};
  const handler: Fn = { name: h.name, url, line: h.line, column: h.column };
  const callee = h.name === '' ? soleAppCallee(view.profile, h) : undefined;
  if (callee === undefined) return { culprit: toCulprit(original(run, handler), run.cwd) };
  return { culprit: toCulprit(original(run, callee), run.cwd), via: toCulprit(original(run, handler), run.cwd) };
}

/**
 * A function at its position in the source the app wrote, through the run's source maps: V8's
 * position is the generated code's (tsx compiles in memory, a whole module on one line).
 */
function original(run: RunData, fn: Fn): Fn {
  const path = urlToPath(fn.url);
  const pos = path === undefined ? undefined : runResolver(run).original(path, fn.line - 1, fn.column - 1);
  return pos === undefined ? fn : { name: fn.name, url: pos.path, line: pos.line, column: pos.column };
}

/**
 * The app script that defines `h` by the function ranges written at the end of the run: the one
 * script with a function of its name beginning on its line, at or before its column (V8 places a
 * function at its parameters, a range at its start). Undefined when none or several do.
 */
function urlByRanges(run: RunData, h: NonNullable<UnansweredRoute['handler']>): string | undefined {
  const found = Object.entries(run.functionRanges ?? {}).filter(
    ([url, rows]) => isAppUrl(url) && rows.some(([name, line, column]) => name === h.name && line === h.line - 1 && column <= h.column - 1),
  );
  return found.length === 1 ? found[0][0] : undefined;
}

/** The one app function the handler's profile nodes call (by samples under it), if there is one. */
function soleAppCallee(profile: CpuProfile, h: NonNullable<UnansweredRoute['handler']>): Fn | undefined {
  const byId = new Map<number, CpuProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const weight = subtreeHits(profile, byId);
  const callees = new Map<string, { fn: Fn; hits: number }>();
  for (const n of profile.nodes) {
    const f = n.callFrame;
    if (String(f.scriptId) !== h.scriptId || f.lineNumber + 1 !== h.line || f.columnNumber + 1 !== h.column) continue;
    for (const id of n.children ?? []) {
      const c = byId.get(id);
      if (c === undefined || !isAppUrl(c.callFrame.url) || c.callFrame.functionName === '') continue;
      const cf = c.callFrame;
      const key = `${cf.scriptId}:${cf.lineNumber}:${cf.columnNumber}`;
      const e = callees.get(key) ?? {
        fn: { name: cf.functionName, url: cf.url, line: cf.lineNumber + 1, column: cf.columnNumber + 1 },
        hits: 0,
      };
      e.hits += weight.get(id) ?? 0;
      callees.set(key, e);
    }
  }
  const ranked = [...callees.values()].sort((a, b) => b.hits - a.hits);
  const sum = ranked.reduce((a, c) => a + c.hits, 0);
  if (ranked.length === 0) return undefined;
  return ranked.length === 1 || (sum > 0 && ranked[0].hits / sum >= HANDLER_CALLEE_MIN_SHARE) ? ranked[0].fn : undefined;
}

/** Samples in each node's subtree (children before parents, iteratively). */
function subtreeHits(profile: CpuProfile, byId: Map<number, CpuProfileNode>): Map<number, number> {
  const out = new Map<number, number>();
  const order: CpuProfileNode[] = [];
  const root = profile.nodes[0];
  const stack = root === undefined ? [] : [root];
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    order.push(n);
    for (const id of n.children ?? []) {
      const c = byId.get(id);
      if (c !== undefined) stack.push(c);
    }
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    let sum = n.hitCount ?? 0;
    for (const id of n.children ?? []) sum += out.get(id) ?? 0;
    out.set(n.id, sum);
  }
  return out;
}

function isAppUrl(url: string): boolean {
  return (
    url !== '' && !url.startsWith('node:') && !/[\\/]node_modules[\\/]/.test(url) && (url.startsWith('file://') || url.startsWith('/'))
  );
}

function toCulprit(fn: Fn, cwd: string): Culprit {
  return {
    function: fn.name || '(anonymous)',
    file: relativeFile(fn.url, cwd),
    line: fn.line,
    ...(fn.column ? { column: fn.column } : {}),
  };
}
