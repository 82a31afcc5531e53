// Runs every analyzer over a run and orders the findings by impact, so findings[0] is the
// main problem. Two findings blaming the same function are merged into the more specific one
// (a sync crypto call is more precise than "the loop is blocked"). An analyzer that throws is
// reported as an info finding, never fatal: one bad detector must not cost the rest. A run that
// lacks the evidence a verdict needs gets HOTPATH_INCOMPLETE instead of "healthy" (incomplete.ts).

import type { RunData } from '../run-dir/run-data.js';
import type { Category, Finding, Severity } from './finding.js';
import type { Analyzer } from './analyzer.js';
import type { FindingCode } from './finding-codes.js';
import { analyzers } from './analyzer-list.js';
import { healthyFinding } from './healthy.js';
import { diagnosisGaps, incompleteFinding } from './incomplete.js';
import { offTargetLoad } from './off-target-load.js';
import { crashOfLeak, TARGET_ENDED_CODE } from './target-ended.js';
import { jsonSafe, type AlsoFound } from './evidence.js';
import { functionKey } from '../profile/anonymous-names.js';

const severityRank: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

/**
 * How specific each category is, lower first: when two findings name the same culprit, the lower
 * one wins. A Record, so a new category cannot be left out (it would not compile).
 */
export const SPECIFICITY: Readonly<Record<Category, number>> = {
  'listener-leak': 0,
  'handler-growth': 1,
  'timer-leak': 2,
  'sync-io': 3,
  'memory-leak': 4,
  'gc-pressure': 5,
  'connection-churn': 6,
  'unanswered-requests': 7,
  'off-loop-cpu': 8,
  'io-wait': 9,
  // The socket write path a function pays for (native frames, --native) says more than "blocks".
  'socket-writes': 10,
  'event-loop-blocking': 11,
  serialization: 12,
  'load-generator-bound': 13,
  healthy: 14,
  incomplete: 15,
  'setup-failed': 16,
  'off-target-load': 17,
  // Never merged with another finding (mergeSameCulprit leaves it alone): the process that died is its own fact.
  'target-ended': 18,
};

export function analyzeRun(run: RunData, list: readonly Analyzer[] = analyzers): Finding[] {
  const findings: Finding[] = [];
  for (const analyze of list) {
    try {
      findings.push(...analyze(run).filter(hasEvidence).map(withSafeEvidence));
    } catch (err) {
      findings.push(analyzerFailed(analyze, err));
    }
  }
  const analyzed = crashOfLeak(cloneOfHandOver(setupWorkOfChurn(heapHeldByGrowth(mergeSameCulprit(creepExplainedByGrowth(findings))))));
  // A load that got mostly redirects or errors, with nothing else found, measured those (off-target-load.ts).
  const offTarget = offTargetLoad(run, analyzed);
  const merged = offTarget ? [...analyzed, withSafeEvidence(offTarget)] : analyzed;
  // No verdict without evidence (incomplete.ts): what is missing is said, never called healthy.
  const gaps = diagnosisGaps(run);
  const incomplete = incompleteFinding(run, gaps);
  if (incomplete) return orderFindings([...merged, withSafeEvidence(incomplete)]);
  const healthy = healthyFinding(run, merged);
  return orderFindings(healthy ? [...merged, withSafeEvidence(healthy)] : merged);
}

/** What the growth analyzers (listeners, routes, timers, heap) write. */
const GROWTH_CODES: ReadonlySet<string> = new Set([
  'HOTPATH_LISTENER_LEAK',
  'HOTPATH_HANDLER_GROWTH',
  'HOTPATH_TIMER_LEAK',
  'HOTPATH_MEMORY_LEAK',
  'HOTPATH_EXTERNAL_MEMORY_LEAK',
  'HOTPATH_HEAP_GROWTH_UNCONFIRMED',
] satisfies FindingCode[]);

/**
 * Latency creep that a growth analyzer found the cause of is that growth's symptom: the growth
 * finding says it (its latencyTrendR2), and the creep is not reported on its own.
 */
export function creepExplainedByGrowth(findings: Finding[]): Finding[] {
  if (!findings.some((f) => GROWTH_CODES.has(f.code))) return findings;
  return findings.filter((f) => f.code !== 'HOTPATH_LATENCY_CREEP');
}

/**
 * Growth that makes latency creep, or that its analyzer judged critical (a listener per request,
 * an interval per request), is a root cause: whatever else is hot is multiplied by it.
 */
const GROWTH: ReadonlySet<Category> = new Set(['listener-leak', 'handler-growth', 'timer-leak', 'memory-leak']);
const isRootCause = (f: Finding) =>
  (GROWTH.has(f.category) && (f.evidence.latencyTrendR2 !== undefined || f.severity === 'critical')) || f.evidence.explains !== undefined;

/**
 * What ended the run: the target's end (a crash, an exit) unless a finding caused it (a heap out of
 * memory after a leak), and that cause. Nothing else measured matters as much as a server that died.
 */
const endsRun = (f: Finding) =>
  (f.code === TARGET_ENDED_CODE && f.evidence.causedBy === undefined) || f.evidence.explains === TARGET_ENDED_CODE;

/**
 * Severity first (a critical finding always leads; "healthy" leads the info notes), then what
 * ended the run (endsRun), then root causes, then findings that name
 * a culprit (what the user can act on) before those that could not, then the share of time
 * explained.
 */
export function orderFindings(findings: Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      severityRank[a.severity] - severityRank[b.severity] ||
      Number(endsRun(b)) - Number(endsRun(a)) ||
      Number(b.code === 'HOTPATH_HEALTHY') - Number(a.code === 'HOTPATH_HEALTHY') ||
      Number(isRootCause(b)) - Number(isRootCause(a)) ||
      Number(b.culprit !== undefined) - Number(a.culprit !== undefined) ||
      b.impact - a.impact,
  );
}

/**
 * What one leaked registration plausibly keeps alive: its closure and what that captures (a
 * request's objects): 1-5 KB measured on pending timers and socket listeners; 8 KB is generous.
 */
export const HEAP_PER_REGISTRATION_BYTES = 8 * 1024;
/** A growth finding explains heap growth from this many registrations per request. */
const HOLDING_MIN_PER_REQUEST = 0.1;
const HOLDERS: ReadonlySet<Category> = new Set(['listener-leak', 'timer-leak', 'handler-growth']);
/**
 * A registration about every other request or more, made in the file the heap's culprit
 * allocated the kept bytes in, holds them whatever their size per request: its closure captures
 * what that code built (round t, 2026-11-29: an interval per request capturing 300 strings, about
 * 19 KB a request, read as a heap leak on the `Array.from` callback, the timer-leak on its site second).
 */
export const SAME_FILE_MIN_PER_REQUEST = 0.5;
/** Handles left open (memory-leak by category) hold their objects and listeners too. */
const HANDLE_LEAK = 'HOTPATH_HANDLE_LEAK';
const isHolder = (f: Finding) => HOLDERS.has(f.category) || f.code === HANDLE_LEAK;

/**
 * A module reloaded per request (sync-io's `reloadsModule`: require() of a module deleted from
 * require.cache) keeps every copy: Node pushes each new Module into its parent's `children`. It
 * holds the module's whole exports (a parsed config file), so no per-registration bound applies.
 */
const reloadsModules = (f: Finding) =>
  f.code === 'HOTPATH_SYNC_IO' &&
  f.evidence.reloadsModule === true &&
  f.severity !== 'info' &&
  Number(f.evidence.callsPerRequest ?? 0) >= HOLDING_MIN_PER_REQUEST;

/**
 * Code compiled per request (`new Function`, `eval`, vm: blocking whose work is compiling) holds
 * heap of its own: each compile leaves its script, its code and a compilation-cache entry in the
 * old generation until full GCs age them out, so the heap after full GCs rises with the requests
 * for a while (the rule-compile scenario: 12 → 52 MB in 5 s, its allocator the handler). The
 * compiling is the cause to fix; the growth is its symptom, as a module reloaded per request.
 */
const compilesPerRequest = (f: Finding) => f.category === 'event-loop-blocking' && f.evidence.work === 'compile' && f.severity !== 'info';

/**
 * Heap growth that a leak of listeners, timers or handlers accounts for is its symptom: each
 * pending timer or listener holds its closure. The growth finding leads (with the heap's
 * severity when that was higher) and the memory leak says what most likely holds its memory.
 * Only when the registrations per request could hold the bytes per request (a cache that keeps
 * 16 KB per request is a leak of its own). The heap profile's largest allocator is no counter-
 * argument: it ranks what was allocated, garbage included, not what stayed.
 */
export function heapHeldByGrowth(findings: Finding[]): Finding[] {
  // LinkedEvidence types these fields; Number() stays because jsonSafe has already turned a
  // non-finite number into 'Infinity' or null by the time the post-steps read them.
  const heap = findings.find((f) => f.category === 'memory-leak' && f.code !== HANDLE_LEAK && f.severity !== 'info');
  if (!heap) return findings;
  const bytesPerRequest = Number(heap.evidence.bytesPerRequest ?? 0);
  const rate = (f: Finding) => Math.max(Number(f.evidence.perRequest ?? 0), Number(f.evidence.perRequestAllSockets ?? 0));
  // Registered where the kept bytes were allocated: each registration's closure is what the heap
  // keeps, whatever its size (a 300-string context captured by an interval per request).
  const sameFile = (f: Finding) =>
    rate(f) >= SAME_FILE_MIN_PER_REQUEST && f.culprit !== undefined && heap.culprit !== undefined && f.culprit.file === heap.culprit.file;
  const holder =
    findings
      .filter((f) => isHolder(f) && f.severity !== 'info' && rate(f) >= HOLDING_MIN_PER_REQUEST)
      .filter((f) => (bytesPerRequest > 0 && bytesPerRequest <= rate(f) * HEAP_PER_REGISTRATION_BYTES) || sameFile(f))
      .sort((a, b) => rate(b) - rate(a))[0] ??
    findings.find(reloadsModules) ??
    findings.find(compilesPerRequest);
  if (!holder) return findings;
  const top = Math.min(severityRank[holder.severity], severityRank[heap.severity]);
  return findings.map((f) => {
    if (f === holder) return { ...f, severity: (Object.keys(severityRank) as Severity[])[top], impact: Math.max(f.impact, heap.impact) };
    if (f !== heap) return f;
    return {
      ...f,
      severity: 'warning',
      summary: reloadsModules(holder)
        ? `${f.summary} Most likely what holds it: ${lowerFirst(holder.title)} (${holder.category}); each reload leaves a new Module with its exports in its parent's children.`
        : compilesPerRequest(holder)
          ? `${f.summary} Most likely what holds it: code compiled per request (${lowerFirst(holder.title)}); each compile keeps its script, code and a compilation-cache entry until full GCs age them out.`
          : `${f.summary} Most likely what holds it: ${lowerFirst(holder.title)} (${holder.code === HANDLE_LEAK ? 'a handle leak' : holder.category}), each one keeping its closure alive.`,
      evidence: { ...f.evidence, heldBy: holder.code },
    };
  });
}

/** The kinds of work a blocked loop spends setting up connections: sockets' connect, and an HTTP client opening one. */
const CONNECTION_SETUP_WORK: ReadonlySet<string> = new Set(['net', 'http-client']);

/**
 * A loop blocked by setting up connections (its dominant work is sockets' connect or the HTTP
 * client's, plus TLS's crypto when the calls are https) while the calls open a new connection
 * almost every time: the churn is the cause, the blocking its cost. The churn finding leads (with
 * the higher severity and impact of the two) and the blocking finding says so and where the
 * connections are opened.
 */
export function setupWorkOfChurn(findings: Finding[]): Finding[] {
  const churn = findings.find((f) => f.code === 'HOTPATH_OUTGOING_CONNECTION_CHURN' && f.severity !== 'info');
  if (!churn) return findings;
  const tls = String(churn.evidence.origin ?? '').startsWith('https:');
  const blocking = findings.find(
    (f) =>
      f.category === 'event-loop-blocking' &&
      f.severity !== 'info' &&
      f.evidence.work !== undefined &&
      (CONNECTION_SETUP_WORK.has(f.evidence.work) || (tls && f.evidence.work === 'crypto')),
  );
  if (!blocking) return findings;
  const top = (Object.keys(severityRank) as Severity[])[Math.min(severityRank[churn.severity], severityRank[blocking.severity])];
  const site = churn.culprit ? ` (${churn.culprit.function}, ${churn.culprit.file}:${churn.culprit.line})` : '';
  return findings.map((f) => {
    if (f === churn)
      return { ...f, severity: top, impact: Math.max(f.impact, blocking.impact), evidence: { ...f.evidence, explains: blocking.code } };
    if (f !== blocking) return f;
    return {
      ...f,
      summary: `${f.summary} This work is setting up connections: their cause is that ${lowerFirst(churn.title)}${site} (connection-churn).`,
      evidence: {
        ...f.evidence,
        causedBy: churn.code,
        ...(churn.culprit ? { causeSite: `${churn.culprit.file}:${churn.culprit.line}` } : {}),
      },
    };
  });
}

/**
 * A loop blocked by structured clones (work `clone`: `postMessage`'s serialization) beside a
 * worker pool saturated by the messages sent from the same file: the worker deserializes what the
 * loop serialized, so what each message carries is the cause of both. The blocking finding, which
 * names the function that sends, leads (with the higher severity and impact of the two); the
 * off-loop finding says its workers' CPU starts with that clone. A worker kept busy by its own
 * work beside a small clone shows no blocking finding on clone work, and keeps its lead.
 */
export function cloneOfHandOver(findings: Finding[]): Finding[] {
  const blocking = findings.find((f) => f.category === 'event-loop-blocking' && f.severity !== 'info' && f.evidence.work === 'clone');
  if (!blocking?.culprit) return findings;
  const file = blocking.culprit.file;
  const pool = findings.find(
    (f) =>
      f.category === 'off-loop-cpu' &&
      f.severity !== 'info' &&
      f.evidence.kind === 'worker-threads' &&
      typeof f.evidence.sentAt === 'string' &&
      f.evidence.sentAt.slice(0, f.evidence.sentAt.lastIndexOf(':')) === file,
  );
  if (!pool) return findings;
  const top = (Object.keys(severityRank) as Severity[])[Math.min(severityRank[pool.severity], severityRank[blocking.severity])];
  return findings.map((f) => {
    if (f === blocking)
      return { ...f, severity: top, impact: Math.max(f.impact, pool.impact), evidence: { ...f.evidence, explains: pool.code } };
    if (f !== pool) return f;
    return {
      ...f,
      summary: `${f.summary} Each message is cloned: serialized on the loop in ${blocking.culprit!.function} (${file}:${blocking.culprit!.line}), deserialized again by the worker, so what a message carries costs both sides.`,
      evidence: { ...f.evidence, causedBy: blocking.code },
    };
  });
}

/** "TCP sockets pile up..." → "tCP" must not happen: an acronym or an API name stays as written. */
const lowerFirst = (s: string) => (/^[A-Z][A-Z]|^\w+\.\w/.test(s) ? s : s.charAt(0).toLowerCase() + s.slice(1));

/**
 * A function and the anonymous ones written inside it ("(anonymous in f)") are one place to fix; a
 * top-level anonymous function is its own, by line. Findings without a culprit about work no app
 * function ran (a body parser's JSON.parse: blocking and serialization) are one by where it ran.
 */
const culpritKey = (f: Finding) =>
  f.culprit
    ? functionKey({ name: f.culprit.function, file: f.culprit.file, line: f.culprit.line })
    : f.evidence.noAppCode === true && typeof f.evidence.workSource === 'string'
      ? `work ${f.evidence.workSource}`
      : undefined;

/**
 * Keeps one finding per culprit function (with the anonymous functions written inside it): the most specific category among the actionable
 * (warning or critical) ones, or among the info notes when there is no actionable one
 * (JSON-bound blocking counts as serialization), with the group's highest severity and
 * impact and the others listed in `evidence.alsoFound`.
 */
export function mergeSameCulprit(findings: Finding[]): Finding[] {
  const groups = new Map<string, Finding[]>();
  const out: Finding[] = [];
  for (const f of findings) {
    const key = f.code === TARGET_ENDED_CODE ? undefined : culpritKey(f);
    if (key === undefined) out.push(f);
    else groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  for (const group of groups.values()) {
    if (group.length === 1) {
      out.push(group[0]);
      continue;
    }
    // Warnings and criticals compete on specificity alone (GC pressure in a function explains why
    // that function blocks the loop); an info note never displaces an actionable finding.
    const top = Math.min(...group.map((f) => severityRank[f.severity]));
    const actionable = top < severityRank.info;
    const rank = (f: Finding) => (actionable && f.severity === 'info' ? 100 : 0) + specificity(f, group);
    // Of equally specific ones (two sync calls in one function), the one that costs the most.
    const [keep, ...rest] = [...group].sort((a, b) => rank(a) - rank(b) || b.impact - a.impact);
    out.push({
      ...keep,
      severity: (Object.keys(severityRank) as Severity[])[top],
      impact: Math.max(...group.map((f) => f.impact)),
      evidence: {
        ...keep.evidence,
        alsoFound: rest.map((f): AlsoFound => ({ code: f.code, category: f.category, title: f.title, evidence: f.evidence })),
      },
    });
  }
  return out;
}

/**
 * Rank in SPECIFICITY; serialization moves ahead of blocking when the blocking is JSON work.
 * Latency creep files its "more work per request" under handler-growth, but it is inferred from
 * two windows of the profile, not seen registering anything: it ranks after the findings a hook
 * observed directly. A sync call the hook saw in the same function is the mechanism, and its
 * cost rising over a run is as often the disk, the page cache or a busy neighbour as more work.
 */
const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

function specificity(f: Finding, group: Finding[]): number {
  const jsonBlocking = group.some((g) => g.category === 'event-loop-blocking' && g.evidence.work === 'json');
  // Work carrying more of the CPU than GC takes of the time makes the garbage GC collects: the work
  // is the cause, the GC its symptom. JSON (a deep copy through JSON per request) or any avoidable
  // work of a blocking finding (regexp replaces building strings, compiling, copies). GC durations
  // are wall time and swell on a busy machine (a deep copy read 11 % GC beside other tenants, 2-5 %
  // without; a search slugifying 3,000 titles per request 12-16 % beside a spinning process per
  // core, with 67 % of its samples in regexps), the work's share of the samples does not.
  const gc = group.find((g) => g.category === 'gc-pressure');
  const workShare =
    f.category === 'serialization' ? f.evidence.jsonShare : f.category === 'event-loop-blocking' ? f.evidence.avoidableShare : undefined;
  if (gc && workShare !== undefined && num(workShare) > num(gc.evidence.gcShare)) return SPECIFICITY['gc-pressure'] - 0.5;
  if (f.category === 'serialization' && jsonBlocking) return SPECIFICITY['event-loop-blocking'] - 0.5;
  if (f.code === 'HOTPATH_LATENCY_CREEP') return SPECIFICITY['sync-io'] + 0.5;
  // A handle leak names what the heap growth is made of: before a memory leak in the same function.
  if (f.code === HANDLE_LEAK) return SPECIFICITY['memory-leak'] - 0.5;
  // Yielding per item allocates a promise and an immediate per turn: GC pressure in the same function is its symptom.
  if (f.code === 'HOTPATH_LOOP_YIELDS') return SPECIFICITY['gc-pressure'] - 0.5;
  return SPECIFICITY[f.category];
}

function withSafeEvidence(f: Finding): Finding {
  return { ...f, evidence: jsonSafe(f.evidence) as Record<string, unknown> };
}

/** A finding without evidence is not shown (docs/architecture.md, Principles). */
function hasEvidence(f: Finding): boolean {
  return Object.keys(f.evidence).length > 0;
}

function analyzerFailed(analyze: Analyzer, err: unknown): Finding {
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: 'HOTPATH_ANALYZER_FAILED',
    category: 'healthy',
    severity: 'info',
    title: `The ${analyze.name || 'an'} analyzer failed`,
    summary: `One detector could not read this run (${message}); the other findings stand.`,
    evidence: { analyzer: analyze.name, error: message },
    recommendation: 'Run `hotpath report <run-dir> --debug` and file an issue with the run directory attached.',
    impact: 0,
  };
}
