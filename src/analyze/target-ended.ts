// The target ended on its own during the run (meta.json `outcome.status` target-crashed or
// target-exited): the server stopped serving, so the run is never healthy whatever the figures
// before it say. Names what ended it (signals/end-cause.ts: V8's fatal error, the agent's last
// word, its throw watch, the stack Node printed on stderr): the uncaught exception or unhandled
// rejection with the first app frame of its stack as the culprit, a heap out of memory, a signal,
// or process.exit() and its caller; and when, how far into the asked load, after how many requests.
// A heap out of memory beside a memory-leak finding is that leak's doing: crashOfLeak says so.

import type { RunData } from '../run-dir/run-data.js';
import type { CallSite } from '../agent/protocol.js';
import type { Finding } from './finding.js';
import { buildFinding } from './build-finding.js';
import { endCause, type EndCause, type EndKind } from './signals/end-cause.js';
import { describeProgress, loadProgress, progressShare } from './signals/load-progress.js';
import { describeCulprit, isAppSite, relativeFile, siteCulprit } from './signals/culprit.js';
import { round } from './signals/stats.js';
import { targetEndedAdvice } from './target-ended.advice.js';

export const TARGET_ENDED_CODE = 'HOTPATH_TARGET_ENDED';
export type { EndKind };
/** Frames of the fatal stack kept in the evidence. */
export const ENDED_STACK_FRAMES = 6;
/** An error message longer than this is cut in the title (the summary and evidence keep it whole). */
const TITLE_ERROR_CHARS = 90;

type Outcome = RunData['meta']['outcome'];

export function targetEnded(run: RunData): Finding[] {
  const o = run.meta.outcome;
  if (o.status !== 'target-crashed' && o.status !== 'target-exited') return [];
  const cause = endCause(run);
  const { kind, frames } = cause;
  const site = culpritSite(frames);
  const culprit = site ? siteCulprit(site, run.cwd) : undefined;
  const progress = loadProgress(run, o.at);
  const phase = phaseAt(run, o);
  const thrownAt = cause.thrownAt ? `${relativeFile(cause.thrownAt.file, run.cwd)}:${cause.thrownAt.line}` : undefined;
  const when =
    phase === 'load' || phase === undefined ? describeProgress(progress) : `during the ${phase} phase, ${describeProgress(progress)}`;
  const where = culprit ? ` in ${describeCulprit(culprit)}` : thrownAt ? ` at ${thrownAt}` : '';
  return [
    buildFinding({
      code: TARGET_ENDED_CODE,
      category: 'target-ended',
      severity: 'critical',
      title: title(kind, o, cause.error),
      summary:
        `${what(kind, o, cause, culprit !== undefined)}${where}, ${when}.${who(o)} The load stopped there: every request in flight was lost, and ` +
        'the figures of the run (and any other finding) cover only the time before it.',
      evidence: {
        status: o.status,
        kind,
        ...(typeof o.exitCode === 'number' ? { exitCode: o.exitCode } : {}),
        ...(typeof o.signal === 'string' ? { signal: o.signal } : {}),
        ...(cause.error !== undefined ? { error: cause.error } : {}),
        ...(phase !== undefined ? { phase } : {}),
        ...(progress.intoLoadMs !== undefined ? { intoLoadMs: Math.round(progress.intoLoadMs) } : {}),
        ...(progressShare(progress) !== undefined ? { loadShare: round(progressShare(progress) as number, 3) } : {}),
        requestsAnswered: progress.answered,
        requestsSent: progress.sent,
        ...(frames.length > 0 ? { stack: frames.slice(0, ENDED_STACK_FRAMES).map((f) => describeFrame(f, run.cwd)) } : {}),
        ...(thrownAt !== undefined ? { thrownAt } : {}),
        ...(culprit && cause.source ? { culpritFrom: cause.source } : {}),
        ...(o.reason !== undefined ? { reason: o.reason } : {}),
      },
      culprit,
      recommendation: targetEndedAdvice[kind],
      impact: 1,
    }),
  ];
}

/** The first app frame; else the first dependency frame (an error thrown inside a library the app called); never Node's own. */
function culpritSite(frames: readonly CallSite[]): CallSite | undefined {
  return frames.find((f) => isAppSite(f)) ?? frames.find((f) => !f.file.startsWith('node:') && !f.file.startsWith('internal/'));
}

const describeFrame = (f: CallSite, cwd: string) => `${f.function} ${relativeFile(f.file, cwd)}:${f.line}`;

/** The phase the target ended in: by its time, else as the outcome's reason says it. */
function phaseAt(run: RunData, o: Outcome): string | undefined {
  const at = o.at;
  const byTime = at === undefined ? undefined : run.meta.phases.find((p) => p.start <= at && (p.end ?? Infinity) >= at)?.phase;
  return byTime ?? /during the ([\w-]+) phase/.exec(o.reason ?? '')?.[1];
}

const short = (s: string) => (s.length > TITLE_ERROR_CHARS ? `${s.slice(0, TITLE_ERROR_CHARS - 1)}…` : s);

function title(kind: EndKind, o: Outcome, message: string | undefined): string {
  const error = message !== undefined ? `: ${short(message)}` : '';
  switch (kind) {
    case 'uncaught-exception':
      return `The server crashed on an uncaught exception${error}`;
    case 'unhandled-rejection':
      return `The server crashed on an unhandled promise rejection${error}`;
    case 'out-of-memory':
      return 'The server crashed: its JavaScript heap ran out of memory';
    case 'fatal-error':
      return `The server crashed on a fatal error${error}`;
    case 'signal':
      return `The server was killed by ${o.signal ?? 'a signal'} during the run`;
    case 'exit-call':
      return `The server exited with code ${o.exitCode ?? '?'} during the run`;
    case 'exit':
      return 'The server exited (code 0) during the run: it stopped serving';
  }
}

function what(kind: EndKind, o: Outcome, cause: EndCause, named: boolean): string {
  const error = cause.error !== undefined ? ` (${cause.error})` : '';
  const called = named && cause.source === 'agent';
  switch (kind) {
    case 'uncaught-exception':
      return `The server died of an uncaught exception${error}`;
    case 'unhandled-rejection':
      return `The server died of an unhandled promise rejection${error}`;
    case 'out-of-memory':
      return `The server ran out of heap memory and V8 aborted it${error}`;
    case 'fatal-error':
      return `The server was aborted by a fatal error${error}`;
    case 'signal':
      return `The server was killed by ${o.signal ?? 'a signal'}`;
    case 'exit-call':
      return called
        ? `The server exited with code ${o.exitCode ?? '?'}: process.exit(${o.exitCode ?? ''}) was called`
        : `The server exited with code ${o.exitCode ?? '?'} without an uncaught error on its stderr: process.exit(${o.exitCode ?? ''}) was most likely called`;
    case 'exit':
      return called
        ? 'The server exited with code 0: process.exit(0) was called'
        : 'The server exited with code 0: process.exit(0) was called, or it closed its server and its event loop ran out';
  }
}

/** The process that ended, when it was not the one hotpath started (a watcher's child). */
function who(o: Outcome): string {
  const m = /^The target \((pid \d+[^)]*)\)/.exec(o.reason ?? '');
  return m ? ` It was ${m[1].replace(/, a child of.*$/, '')}, a child of the command hotpath started.` : '';
}

/** What grows in memory, any of these, can make a heap run out. */
const LEAK_CODES: readonly string[] = ['HOTPATH_MEMORY_LEAK', 'HOTPATH_EXTERNAL_MEMORY_LEAK', 'HOTPATH_HEAP_GROWTH_UNCONFIRMED'];

/**
 * A heap out of memory beside a memory-leak finding: the leak is the cause, the crash its end. The
 * leak leads (critical, `explains` the crash) and the crash says what it was caused by; heap
 * growth that too few full GCs left unconfirmed is confirmed by the crash.
 */
export function crashOfLeak(findings: Finding[]): Finding[] {
  const crash = findings.find((f) => f.code === TARGET_ENDED_CODE && f.evidence.kind === 'out-of-memory');
  const leak = LEAK_CODES.map((c) => findings.find((f) => f.code === c)).find((f) => f !== undefined);
  if (!crash || !leak) return findings;
  const site = leak.culprit ? ` in ${describeCulprit(leak.culprit)}` : '';
  return findings.map((f): Finding => {
    if (f === crash)
      return {
        ...f,
        summary: `${f.summary} Its cause is the memory growth found beside it${site}: ${leak.title.charAt(0).toLowerCase()}${leak.title.slice(1)} (${leak.code}).`,
        evidence: { ...f.evidence, causedBy: leak.code },
      };
    if (f !== leak) return f;
    return {
      ...f,
      severity: 'critical',
      summary: `${f.summary} The heap then ran out and the server crashed (${TARGET_ENDED_CODE}).`,
      evidence: { ...f.evidence, explains: TARGET_ENDED_CODE },
      impact: Math.max(f.impact, crash.impact),
    };
  });
}
