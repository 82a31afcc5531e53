// The source maps of one run: a SourceMapResolver that knows, besides the maps it finds on
// disk, the ones the agent captured in the target (`sourcemaps-<pid>-<tid>.json`: loaders such
// as tsx compile in memory), and the agent's call sites (growth hooks, stall causes) mapped back
// to the original file and line with it, so every analyzer and report sees `app.ts:12`, not
// the generated position.

import type { CallSite, GrowthMessage } from '../agent/protocol.js';
import type { RunData, ThreadTelemetry } from '../run-dir/run-data.js';
import { SourceMapResolver } from './source-maps.js';
import { urlToPath } from './classify-frame.js';
import { scriptFunctions, type FunctionRanges } from './script-functions.js';
import { anonymousNameAt } from './anonymous-names.js';
import { perRun } from '../run-dir/per-run.js';

/** The resolver of a run, with the captured maps registered (one per run: files are read once). */
export const runResolver: (run: Pick<RunData, 'sourceMaps'>) => SourceMapResolver = perRun((run: Pick<RunData, 'sourceMaps'>) => {
  const resolver = new SourceMapResolver();
  for (const [url, mapUrl] of Object.entries(run.sourceMaps ?? {})) {
    const path = urlToPath(url);
    if (path !== undefined) resolver.addSourceMapUrl(path, mapUrl);
  }
  return resolver;
});

/**
 * An anonymous call site's function named by the named function it was written in ("(anonymous
 * in getConfig)"), as the profiles name it, through the run's function ranges of its script.
 */
export function nameAnonymousSite(site: CallSite, ranges: FunctionRanges | undefined): CallSite {
  if (site.function !== '(anonymous)' || ranges === undefined) return site;
  const script = scriptFunctions(ranges, site.file);
  const line = (site.functionLine ?? site.line) - 1;
  const column = (site.functionColumn ?? site.column) - 1;
  const name = script && line >= 0 ? anonymousNameAt(script, line, Math.max(0, column)) : undefined;
  return name === undefined ? site : { ...site, function: name };
}

/** The text of a line (1-based) of a script, by its URL or path, as the run's resolver reads it (undefined when unreadable). */
export function runSourceLine(run: Pick<RunData, 'sourceMaps'>, url: string, line: number): string | undefined {
  const path = urlToPath(url);
  return path === undefined ? undefined : runResolver(run).sourceLine(path, line);
}

/** A call site at its original position (file as a path), or unchanged without a map. */
export function mapCallSite(site: CallSite, resolver: SourceMapResolver): CallSite {
  const path = urlToPath(site.file);
  if (path === undefined || site.line < 1) return site;
  const pos = resolver.original(path, site.line - 1, Math.max(0, site.column - 1));
  if (pos === undefined) return site;
  // The function's original name is recorded where the function starts (a bundler renames
  // `compressPayload` to `compressPayload2`, a minifier to `a`), not at the call inside it.
  const name =
    site.functionLine !== undefined && site.functionColumn !== undefined
      ? resolver.functionNameAt(path, site.functionLine - 1, Math.max(0, site.functionColumn - 1))
      : undefined;
  return { function: name ?? site.function, file: pos.path, line: pos.line, column: pos.column };
}

type Sited = { site?: CallSite; stack?: CallSite[] };

type SiteMap = (site: CallSite) => CallSite;

function mapSited<T extends Sited>(entry: T, map: SiteMap): T {
  return {
    ...entry,
    ...(entry.site ? { site: map(entry.site) } : {}),
    ...(entry.stack ? { stack: entry.stack.map(map) } : {}),
  };
}

function mapGrowth(m: GrowthMessage, map: SiteMap): GrowthMessage {
  return {
    ...m,
    listeners: m.listeners.map((e) => mapSited(e, map)),
    maxListenersDisabled: m.maxListenersDisabled.map((e) => mapSited(e, map)),
    routes: m.routes.map((e) => mapSited(e, map)),
    timers: m.timers.map((e) => mapSited(e, map)),
    syncCalls: m.syncCalls.map((e) => mapSited(e, map)),
    ...(m.outgoing ? { outgoing: m.outgoing.map((e) => mapSited(e, map)) } : {}),
    ...(m.socketWaits ? { socketWaits: m.socketWaits.map((e) => mapSited(e, map)) } : {}),
    ...(m.messageWaits ? { messageWaits: m.messageWaits.map((e) => mapSited(e, map)) } : {}),
  };
}

/**
 * Maps every call site the agents reported (in place), through the run's resolver; the growth
 * hooks' anonymous sites are first named by the function they were written in.
 */
export function mapRunCallSites(run: Pick<RunData, 'sourceMaps' | 'functionRanges'>, threads: ThreadTelemetry[]): void {
  const resolver = runResolver(run);
  const map: SiteMap = (site) => mapCallSite(nameAnonymousSite(site, run.functionRanges), resolver);
  for (const t of threads) {
    t.growth = t.growth.map((m) => mapGrowth(m, map));
    t.stalls = t.stalls.map((s) =>
      s.cause ? { ...s, cause: s.cause.map((c) => ({ ...c, stack: c.stack.map((f) => mapCallSite(f, resolver)) })) } : s,
    );
  }
}
