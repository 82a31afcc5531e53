// Handler growth: routes or middleware registered again and again after the server started
// listening (a refresh job re-adding a route), so the router stack every request walks keeps
// growing. Culprit: the call site that registers them.

import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import type { GrowthMessage } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { buildFinding, growthSeverity } from './build-finding.js';
import { targetThreads } from './signals/load-window.js';
import { growthStats, lastGrowth, type GrowthStats } from './signals/growth-series.js';
import { isAppSite, siteCulprit } from './signals/culprit.js';
import { latencyTrend, type LatencyTrend } from './signals/latency-trend.js';
import { koaGrowthAdvice, handlerGrowthAdvice } from './handler-growth.advice.js';
import { round, extent } from './signals/stats.js';

/** Registrations of the same route after listen before it is growth, not lazy setup. */
export const HANDLER_GROWTH_MIN_REGISTRATIONS = 3;
/** A router stack this deep makes every request walk a long list: critical even without creep. */
export const HANDLER_GROWTH_CRITICAL_STACK = 200;
/** Impact when latency does not (yet) show the cost. */
export const HANDLER_GROWTH_BASE_IMPACT = 0.05;

type RouteEntry = GrowthMessage['routes'][number];

export function handlerGrowth(run: RunData): Finding[] {
  const trend = latencyTrend(run);
  return targetThreads(run).flatMap((thread) => {
    const last = lastGrowth(thread);
    if (!last) return [];
    return groupBySite(last.routes)
      .filter((g) => isGrowth(thread, g))
      .map((g) => finding(run, thread, g, trend));
  });
}

interface RouteGroup {
  entries: RouteEntry[];
  count: number;
  top: RouteEntry;
}

/** Same site (or same method and path without a site) = one growing registration. */
function groupBySite(routes: RouteEntry[]): RouteGroup[] {
  const groups = new Map<string, RouteEntry[]>();
  for (const r of routes) {
    const key = r.site ? `${r.site.file}:${r.site.line}` : `${r.framework} ${r.method} ${r.path}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((entries) => {
    const top = entries.reduce((a, b) => (b.count > a.count ? b : a));
    return { entries, count: entries.reduce((a, r) => a + r.count, 0), top };
  });
}

/** Registrations reported in the growth messages must keep coming, steadily (Pearson r). */
export const HANDLER_GROWTH_MIN_CORRELATION = 0.8;

/**
 * The same route registered again and again, or registrations that keep coming while load
 * runs. A burst of different routes registered once after listen (async startup) is neither.
 */
function isGrowth(thread: ThreadTelemetry, g: RouteGroup): boolean {
  if (g.top.count >= HANDLER_GROWTH_MIN_REGISTRATIONS) return true;
  const s = registrations(thread, g);
  return (
    s !== undefined &&
    s.points >= 3 &&
    s.delta >= HANDLER_GROWTH_MIN_REGISTRATIONS &&
    Math.max(s.timeCorrelation, s.requestCorrelation) >= HANDLER_GROWTH_MIN_CORRELATION
  );
}

function registrations(thread: ThreadTelemetry, g: RouteGroup): GrowthStats | undefined {
  const keys = new Set(g.entries.map((e) => `${e.framework} ${e.method} ${e.path}`));
  return growthStats(thread, (m) =>
    m.routes.filter((r) => keys.has(`${r.framework} ${r.method} ${r.path}`)).reduce((a, r) => a + r.count, 0),
  );
}

/** `GET /users`, `middleware on /` for use() (and restify's pre()) registrations, `extension onPreResponse` for hapi's ext(). */
const routeName = (r: RouteEntry) =>
  /^ext$/i.test(r.method)
    ? `extension ${r.path}`
    : /^param$/i.test(r.method)
      ? `param handler for ${r.path}`
      : /^(use|all|pre|\*)$/i.test(r.method)
        ? `middleware on ${r.path}`
        : `${r.method} ${r.path}`;

/** Koa keeps middleware in one array that runs in order until one does not call next(). */
const stackName = (framework: string) =>
  framework === 'koa' ? "Koa's middleware stack (app.middleware)" : `The ${framework} router stack`;
/**
 * Koa composes app.middleware into one function when the server is made (app.callback()): a
 * later app.use only grows the array, and runs only where the app builds a new callback, which a
 * latency creep shows.
 */
const walk = (framework: string, creeping: boolean, method: string) =>
  /^param$/i.test(method)
    ? 'Express runs every callback bound to a param, in turn, on each request whose route has that param, so each of those requests runs every copy'
    : framework === 'hapi'
      ? 'hapi adds each to the lifecycle of every route (each registration rebuilds them all), so every request runs each copy'
      : framework !== 'koa'
        ? creeping
          ? 'every request walks past each copy'
          : 'latency did not creep, so the copies sit where the requests answered so far do not reach them; they hold memory, ' +
            'and every request that gets that far (a route registered after them, a 404) walks past each one'
        : creeping
          ? 'each copy stays in app.middleware and runs on every request that gets that far'
          : 'latency did not creep: Koa composed its middleware when the server was made (app.callback()), so the copies ' +
            'pile up in app.middleware (memory) and the middleware added late never runs';

function finding(run: RunData, thread: ThreadTelemetry, g: RouteGroup, trend: LatencyTrend | undefined): Finding {
  const s = registrations(thread, g);
  const { top } = g;
  const name = routeName(top);
  const culprit = isAppSite(top.site) ? siteCulprit(top.site, run.cwd) : undefined;
  // Param callbacks are kept per param name, not in the router's stack.
  const stack = Math.max(0, extent(g.entries.map((e) => (/^param$/i.test(e.method) ? 0 : (e.stackSize ?? 0)))).max);
  const deep = stack >= HANDLER_GROWTH_CRITICAL_STACK;
  const where = culprit ? ` Registered by \`${culprit.function}\` at ${culprit.file}:${culprit.line}.` : '';
  const stackText = stack > 0 ? ` ${stackName(top.framework)} now holds ${stack} ${top.framework === 'koa' ? 'functions' : 'layers'}.` : '';
  const rates = [
    ...(s && s.perSecond > 0 ? [`${round(s.perSecond, 1)} per second`] : []),
    ...(s && s.perRequest > 0 ? [`${round(s.perRequest, 2)} per request`] : []),
  ];
  const rate = rates.length > 0 ? ` (${rates.join(', ')})` : '';
  return buildFinding({
    code: 'HOTPATH_HANDLER_GROWTH',
    category: 'handler-growth',
    severity: growthSeverity(deep, trend),
    title: `${name[0].toUpperCase()}${name.slice(1)} is registered again and again after listen`,
    summary: `${top.framework} ${name} was registered ${g.count} times after the server started listening${rate}; ${walk(top.framework, trend?.creeping === true, top.method)}.${stackText}${where}`,
    evidence: {
      framework: top.framework,
      method: top.method,
      path: top.path,
      registrations: g.count,
      ...(stack > 0 ? { routerStackSize: stack } : {}),
      ...(s
        ? { perSecond: s.perSecond, perRequest: s.perRequest, timeCorrelation: s.timeCorrelation, requestCorrelation: s.requestCorrelation }
        : {}),
      routes: g.entries.map((e) => ({ method: e.method, path: e.path, count: e.count })),
    },
    culprit,
    recommendation: top.framework === 'koa' ? koaGrowthAdvice : handlerGrowthAdvice(name),
    growth: { trend, baseImpact: HANDLER_GROWTH_BASE_IMPACT },
  });
}
