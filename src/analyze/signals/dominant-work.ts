// The kind of work that dominates a profile when no app function is to blame for it: a body
// parser's JSON.parse run from the request stream, a schema validator's regexp run by the
// framework, with no app frame on the stack. Its kind still says what to do, and where it ran
// says where: the dependency's function and hot line, the package, the regexp's pattern and the
// place the app's own source writes it (profile/pattern-sites.ts), and, for JSON.parse, how big
// the requests the load sent were.

import type { RunData } from '../../run-dir/run-data.js';
import type { Frame, WorkKind } from '../../profile/call-tree.js';
import type { Culprit } from '../finding.js';
import type { CpuView } from './cpu-view.js';
import { workPlaces, type WorkPlace } from '../../profile/work-breakdown.js';
import { dependencyName } from '../../profile/work-kind.js';
import { hotLine } from '../../profile/hot-line.js';
import { runPatternSites } from '../../profile/pattern-sites.js';
import { enclosingFunctionName, routeFragments, runRouteSites } from '../../profile/route-sites.js';
import { readFileSync } from 'node:fs';
import { scriptFunctions } from '../../profile/script-functions.js';
import { isSpecificWork } from './culprit-work.js';
import { relativeFile } from './culprit.js';
import { round } from './stats.js';

/** One kind of work must hold this share of the active CPU to be said to dominate it. */
export const DOMINANT_WORK_MIN_SHARE = 0.3;
/** Its hottest line names where in the function that ran it when it holds this share of the function's samples. */
export const DOMINANT_WORK_LINE_SHARE = 0.25;
/**
 * Requests the load sent at least this large on average (headers and body) carry bodies worth
 * parsing: JSON.parse run with no app code on the stack is then the body parser's.
 */
export const LARGE_REQUEST_BYTES = 16 * 1024;
/** A pattern this short can be written in the app for other reasons: it names no culprit. */
export const PATTERN_SITE_MIN_CHARS = 6;
/**
 * Distinct patterns a router's matching ran in one profile for its work to read as a route table
 * walked per request: Express tries each route registered before the one a request hits, in order
 * (round s: 6,000 generated redirect routes ahead of the live one, over a thousand of their
 * patterns in a 5 s profile; an app's few dozen routes cost microseconds).
 */
export const ROUTE_TABLE_MIN_PATTERNS = 20;
/** A router's matching code: Express 4's layer (whatever the package is installed as), router's (Express 5), path-to-regexp. */
const ROUTER_MATCHING =
  /(?:^|[\\/])node_modules[\\/](?:[^\\/]+[\\/]lib[\\/]router[\\/]layer\.js$|router[\\/]lib[\\/]layer\.js$|path-to-regexp[\\/])/;

export interface DominantWork {
  work: WorkKind;
  label: string;
  /** Of the active CPU, 0..1. */
  share: number;
  us: number;
  /** Most of it ran with no app frame on the stack. */
  unowned: boolean;
  /** The function with a source file that ran most of it (a dependency's, or the app's), with its hot line. */
  source?: { frame: Frame; line: number; package?: string };
  /** The source's share of the work that ran under any function with a source file, 0..1. */
  sourceShare?: number;
  /** A regexp's source, from its `RegExp:` frame. */
  pattern?: string;
  /** Where the app's own source writes that pattern (at most 3). */
  patternSites: Culprit[];
  /** Distinct patterns a router's matching ran, when they make a route table (ROUTE_TABLE_MIN_PATTERNS). */
  routePatterns?: number;
  /** The one place the app writes the text those patterns share (profile/route-sites.ts), in its enclosing function. */
  routeSite?: Culprit;
  /** Mean bytes of a request the load sent, when large (LARGE_REQUEST_BYTES). */
  requestBytes?: number;
}

/** Mean size of the requests the load sent, headers included, or undefined without a load result. */
function requestBytes(run: RunData): number | undefined {
  const sent = run.load?.requests.sent ?? 0;
  return sent > 0 && run.load ? run.load.throughput.bytesWritten / sent : undefined;
}

/**
 * Packages that parse request bodies (JSON, urlencoded forms, multipart): their own code holding
 * the CPU with no app code on the stack, on large requests, is body parsing.
 */
const BODY_PARSERS =
  /^(body-parser|qs|co-body|koa-body|koa-bodyparser|@koa\/bodyparser|@fastify\/formbody|fast-querystring|secure-json-parse|formidable|busboy|@fastify\/busboy|multer)$/;

/**
 * The specific kind of work holding the most of the CPU, when it holds DOMINANT_WORK_MIN_SHARE;
 * without one, a single dependency's own code (no specific kind: a body parser's qs, a
 * validator) holding that share with no app code on the stack.
 */
export function dominantWork(run: RunData, view: CpuView): DominantWork | undefined {
  if (view.activeUs <= 0) return undefined;
  const [kind, us] = [...view.work].filter(([k]) => isSpecificWork(k)).sort((a, b) => b[1] - a[1])[0] ?? [];
  if (kind !== undefined && us !== undefined && us / view.activeUs >= DOMINANT_WORK_MIN_SHARE)
    return workPlace(run, view, kind as WorkKind);
  const pkg = workPlaces(view.tree).find((p) => p.work === 'deps');
  if (!pkg || pkg.us / view.activeUs < DOMINANT_WORK_MIN_SHARE || pkg.unownedUs < pkg.us / 2) return undefined;
  return placeDetails(run, view, pkg, pkg.us);
}

/** Where one kind of work ran (its largest label): the function, the pattern, the requests' size. */
export function workPlace(run: RunData, view: CpuView, kind: WorkKind): DominantWork | undefined {
  const place = workPlaces(view.tree).find((p) => p.work === kind);
  return place ? placeDetails(run, view, place, view.work.get(kind) ?? 0) : undefined;
}

function placeDetails(run: RunData, view: CpuView, place: WorkPlace, us: number): DominantWork | undefined {
  if (view.activeUs <= 0) return undefined;
  const kind = place.work;
  const tree = view.tree;
  const sourceFrame = place.sources[0] !== undefined ? place.sources[0].frame : undefined;
  const source = sourceFrame === undefined ? undefined : sourceOf(tree.frames[sourceFrame], hotLine(tree, sourceFrame));
  const sourced = place.sources.reduce((a, x) => a + x.us, 0);
  const regexFrame =
    kind === 'regex' ? place.frames.map((f) => tree.frames[f.frame]).find((f) => f.name.startsWith('RegExp: ')) : undefined;
  const pattern = regexFrame?.name.slice('RegExp: '.length);
  const sites = pattern !== undefined && pattern.length >= PATTERN_SITE_MIN_CHARS ? runPatternSites(run, pattern) : [];
  const bytes = requestBytes(run);
  const routeSources =
    regexFrame !== undefined && source !== undefined && ROUTER_MATCHING.test(source.frame.file)
      ? [...new Set(place.frames.map((f) => tree.frames[f.frame].name).filter((n) => n.startsWith('RegExp: ')))].map((n) =>
          n.slice('RegExp: '.length),
        )
      : [];
  const routePatterns = routeSources.length;
  const routeSite = routePatterns >= ROUTE_TABLE_MIN_PATTERNS ? routeTableSite(run, routeSources) : undefined;
  return {
    work: kind,
    label: place.label,
    share: us / view.activeUs,
    us,
    unowned: place.unownedUs >= place.us / 2,
    ...(source ? { source, sourceShare: sourced > 0 ? place.sources[0].us / sourced : 0 } : {}),
    ...(pattern !== undefined ? { pattern } : {}),
    patternSites: sites
      .slice(0, 3)
      .map((s) => ({ function: `/${pattern}/`, file: relativeFile(s.path, run.cwd), line: s.line, column: s.column })),
    ...(bytes !== undefined && bytes >= LARGE_REQUEST_BYTES ? { requestBytes: bytes } : {}),
    ...(routePatterns >= ROUTE_TABLE_MIN_PATTERNS ? { routePatterns } : {}),
    ...(routeSite ? { routeSite } : {}),
  };
}

/** The function a line of an app file lies in, from its source (see enclosingFunctionName). */
function sourceFunctionName(path: string, line: number): string | undefined {
  try {
    return enclosingFunctionName(readFileSync(path, 'utf8'), line);
  } catch {
    return undefined;
  }
}

/** The one line of the app writing the text the route patterns share, named by the function it lies in. */
function routeTableSite(run: RunData, sources: readonly string[]): Culprit | undefined {
  const sites = runRouteSites(run, routeFragments(sources).join('\0'));
  if (sites.length !== 1) return undefined;
  const [site] = sites;
  const fns = scriptFunctions(run.functionRanges, site.path);
  const fn = fns?.at(site.line - 1, site.column - 1);
  const name =
    fn && fn.name !== '' ? fn.name : (fns?.enclosingName(site.line - 1, site.column - 1) ?? sourceFunctionName(site.path, site.line));
  if (name === undefined) return undefined;
  return { function: name, file: relativeFile(site.path, run.cwd), line: site.line, column: site.column };
}

function sourceOf(frame: Frame, hot: ReturnType<typeof hotLine>) {
  const line = hot && hot.share >= DOMINANT_WORK_LINE_SHARE ? hot.line : frame.line;
  return { frame, line, ...(frame.kind === 'deps' ? { package: dependencyName(frame.file) } : {}) };
}

/** A dependency's file from its node_modules directory on (absolute paths outside the app are long); the app's relative to cwd. */
export function shortFile(file: string, cwd: string): string {
  const i = file.indexOf('node_modules/');
  return i >= 0 ? file.slice(i) : relativeFile(file, cwd);
}

/** `1.2 MB`, `640 KB`: a request's size for a summary. */
export function describeBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${round(bytes / 1024 / 1024, 1)} MB` : `${round(bytes / 1024, 0)} KB`;
}

/**
 * The share of the sourced work an app function must start for work run with no app frame on the
 * stack (Node's own code resumed after an await: fs.promises' reads and closes) to be charged to it.
 */
export const STARTED_IN_MIN_SHARE = 0.5;

/**
 * The app function that starts work which then runs with no app frame on the stack: the work is
 * unowned, and the only functions with a source file it ever ran under are mostly that app
 * function (the synchronous start of each call, before Node's continuations take over).
 */
export function startedInApp(d: DominantWork): DominantWork['source'] | undefined {
  if (!d.unowned || d.source?.frame.kind !== 'app' || d.pattern !== undefined) return undefined;
  return (d.sourceShare ?? 0) >= STARTED_IN_MIN_SHARE ? d.source : undefined;
}

/**
 * Whether the work is a body parser's: JSON.parse in a dependency, or a body-parsing package's own
 * code (qs for urlencoded forms), with no app code on the stack, on large requests.
 */
export function parsesRequestBodies(d: DominantWork): boolean {
  if (!d.unowned || d.source?.frame.kind !== 'deps' || d.requestBytes === undefined) return false;
  return d.label === 'JSON.parse' || (d.work === 'deps' && BODY_PARSERS.test(d.label));
}

/**
 * "JSON.parse in the body-parser package (parse, node_modules/body-parser/lib/types/json.js:93)",
 * "the regular expression /^(\w+\s?)*$/, run from the fastify package (validateParam, …)".
 */
export function describeDominantWork(d: DominantWork, cwd: string): string {
  const at = d.source ? `${shortFile(d.source.frame.file, cwd)}:${d.source.line}` : '';
  const where = !d.source
    ? ''
    : d.source.package
      ? `the ${d.source.package} package (${d.source.frame.name}, ${at})`
      : `${d.source.frame.name} (${at})`;
  if (d.pattern !== undefined) return `the regular expression /${d.pattern}/${where ? `, run from ${where}` : ''}`;
  if (d.work === 'deps') return `the ${d.label} package's own code${d.source ? ` (${d.source.frame.name}, ${at})` : ''}`;
  return `${d.label}${where ? ` in ${where}` : ''}`;
}
