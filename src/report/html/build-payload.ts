// Gathers everything report.html shows from a run and its diagnosis into the payload:
// run outline and phases, findings with source excerpts, telemetry per thread, the load
// result, and every CPU and heap profile in compact form. Unreadable parts become
// warnings shown in the page, never a failed report.

import { runHeapProfile } from '../../profile/run-heap-profile.js';
import { runCpuProfile } from '../../profile/run-cpu-profile.js';
import { runResolver } from '../../profile/run-source-maps.js';
import type { ProfileRef, RunData, ThreadTelemetry } from '../../run-dir/run-data.js';
import type { Report } from '../report-schema.js';
import { cpuProfilePayload, heapProfilePayload, type ProfileContext } from './profile-payload.js';
import { PAYLOAD_VERSION, type PayloadPhase, type PayloadProfile, type ReportPayload } from './report-payload.js';
import { readExcerpt } from './source-excerpt.js';
import { threadLabel, threadPayload } from './thread-payload.js';
import { extent } from '../../analyze/signals/stats.js';

export interface BuildPayloadOptions {
  /** Leave profiles out (a smaller report). */
  profiles?: boolean;
  /** Clock for generatedAt (tests). */
  now?: number;
}

export async function buildPayload(run: RunData, report: Report, options: BuildPayloadOptions = {}): Promise<ReportPayload> {
  const { meta } = run;
  const warnings = [...run.readWarnings];
  const runStart = runStartOf(run);
  const end = meta.endedAt ?? Math.max(runStart, extent(meta.phases.map((p) => p.end ?? p.start)).max);
  const sec = (ms: number): number => Math.round(ms - runStart) / 1000;
  const findings = await Promise.all(
    report.findings.map(async (f) => {
      const excerpt = f.culprit ? await readExcerpt(run.cwd, f.culprit.file, f.culprit.line) : undefined;
      return excerpt ? { ...f, excerpt } : f;
    }),
  );
  const threads = [...run.threads].sort((a, b) => served(b) - served(a) || Number(b.listens.length > 0) - Number(a.listens.length > 0));
  return {
    version: PAYLOAD_VERSION,
    generatedAt: options.now ?? Date.now(),
    hotpathVersion: report.hotpathVersion,
    run: {
      dir: run.dir,
      command: meta.command,
      cwd: run.cwd,
      ...(meta.nodeVersion !== undefined ? { nodeVersion: meta.nodeVersion } : {}),
      ...(meta.target?.url !== undefined ? { url: meta.target.url } : {}),
      startedAt: runStart,
      durationSec: sec(end),
      outcome: meta.outcome,
    },
    phases: phases(run, end, sec),
    ...(run.loadWindow ? { loadWindow: { start: sec(run.loadWindow.start), end: sec(run.loadWindow.end) } } : {}),
    findings,
    hotspots: report.hotspots,
    telemetry: report.telemetry,
    load: report.load,
    threads: threads.map((t) => threadPayload(t, meta, runStart)),
    profiles: options.profiles === false ? [] : await profiles(run, warnings),
    warnings,
    agentErrors: report.agentErrors ?? [],
  };
}

/** When the run started (epoch ms); a run directory without meta.json falls back to its first record. */
function runStartOf(run: RunData): number {
  if (run.meta.startedAt > 0) return run.meta.startedAt;
  const firsts = [
    ...run.threads.flatMap((t) => (t.hello ? [t.hello.t] : t.samples.length ? [t.samples[0].t - t.samples[0].intervalMs] : [])),
    ...(run.load ? [run.load.start] : []),
    ...run.profiles.map((p) => p.start),
  ].filter((t) => t > 0);
  return firsts.length ? extent(firsts).min : 0;
}

function phases(run: RunData, end: number, sec: (ms: number) => number): PayloadPhase[] {
  const list = run.meta.phases;
  return list.map((p, i) => ({ phase: p.phase, start: sec(p.start), end: sec(p.end ?? list[i + 1]?.start ?? end) }));
}

/** HTTP requests a thread finished (a cluster primary listens but serves none). */
function served(t: ThreadTelemetry): number {
  let n = 0;
  for (const s of t.samples) n += s.http?.finished ?? 0;
  return n;
}

/** CPU profiles first, of the threads that served the most requests first; then allocations, then what was retained. */
function order(run: RunData): ProfileRef[] {
  const requests = new Map(run.threads.map((t) => [`${t.pid}:${t.threadId}`, served(t)]));
  const load = (p: ProfileRef): number => requests.get(`${p.pid}:${p.threadId}`) ?? 0;
  const rank = (p: ProfileRef): number => (p.kind === 'cpu' ? 0 : p.kind === 'heap' ? 1 : 2);
  return [...run.profiles].sort((a, b) => rank(a) - rank(b) || load(b) - load(a) || a.pid - b.pid || a.threadId - b.threadId);
}

async function profiles(run: RunData, warnings: string[]): Promise<PayloadProfile[]> {
  const ctx: ProfileContext = { cwd: run.cwd, resolver: runResolver(run), runStart: runStartOf(run) };
  const out: PayloadProfile[] = [];
  for (const ref of order(run)) {
    if (ref.unusable) continue; // readRunDir warned already
    const thread = run.threads.find((t) => t.pid === ref.pid && t.threadId === ref.threadId);
    const where = thread ? threadLabel(thread, run.meta) : `pid ${ref.pid} thread ${ref.threadId}`;
    const who = { id: `${ref.kind}-${ref.pid}-${ref.threadId}-${out.length}`, pid: ref.pid, threadId: ref.threadId, start: ref.start };
    try {
      out.push(
        ref.kind === 'cpu'
          ? cpuProfilePayload(runCpuProfile(run, ref), { ...who, label: `CPU · ${where}` }, ctx)
          : heapProfilePayload(
              runHeapProfile(run, ref),
              { ...who, label: `${ref.kind === 'heap' ? 'Allocations' : 'Retained after the load'} · ${where}` },
              ctx,
            ),
      );
    } catch (err) {
      warnings.push(`${ref.kind} profile ${ref.path} left out: ${(err as Error).message}`);
    }
  }
  return out;
}
