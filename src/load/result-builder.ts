// Shapes the engine's merged measurements into the documented LoadResult, and decides
// whether the generator itself was the bottleneck (a named, documented threshold).

import { latencyStats } from './histogram.js';
import { redactUrl } from '../redact.js';
import { LOAD_RESULT_VERSION, type LoadResult, type SetupOutcome } from './load-result.js';
import type { EngineOutput } from './engine.js';
import type { LoadPlan } from './load-plan.js';
import {
  C_BYTES_READ,
  C_BYTES_WRITTEN,
  C_CLOSED_BY_SERVER,
  C_COMPLETED,
  C_LATE,
  C_OPENED,
  C_PARSE,
  C_SENT,
  C_SOCKET_ERRORS,
  C_TIMEOUTS,
} from './worker-protocol.js';

/** A worker busy this share of the time (event-loop utilization) could not go faster: the generator limited the run. */
export const GENERATOR_SATURATION_ELU = 0.9;
/** Warn when more than this share of scheduled sends left late, or were never sent. */
export const SCHEDULE_MISS_WARNING = 0.01;

export function buildResult(plan: LoadPlan, out: EngineOutput, setup: SetupOutcome[]): LoadResult {
  const f = plan.flags;
  const c = out.counters;
  const durationMs = Math.max(0, out.end - out.start);
  const seconds = durationMs / 1000;
  const open = f.rate !== undefined;
  const total = c[C_COMPLETED];
  const cpuUserMs = round3(out.cpu.user / 1000);
  const cpuSystemMs = round3(out.cpu.system / 1000);
  const maxElu = Math.max(0, ...out.workers.map((w) => w.elu));
  const saturated = maxElu >= GENERATOR_SATURATION_ELU;
  const result: LoadResult = {
    version: LOAD_RESULT_VERSION,
    url: f.socket !== undefined ? `unix:${f.socket}:${plan.url.pathname}${plan.url.search}` : redactUrl(plan.url.href),
    model: open ? 'open' : 'closed',
    options: {
      connections: f.connections,
      pipelining: f.pipelining,
      workers: out.workers.length,
      ...(f.amount === undefined ? { duration: f.duration } : { amount: f.amount }),
      warmup: f.warmup,
      ...(open ? { rate: f.rate } : {}),
      timeoutMs: f.timeout,
      keepalive: f.keepalive,
      method: f.method,
      ...(f.scenarioLength !== undefined ? { scenario: f.scenarioLength } : {}),
    },
    start: out.start,
    end: out.end,
    durationMs,
    requests: { total, sent: c[C_SENT], perSecond: seconds > 0 ? round3(total / seconds) : 0, inFlightAtEnd: out.inFlight },
    latency: latencyStats(out.latency),
    ...(out.service !== null ? { serviceTime: latencyStats(out.service) } : {}),
    throughput: {
      bytesRead: c[C_BYTES_READ],
      bytesWritten: c[C_BYTES_WRITTEN],
      bytesReadPerSecond: seconds > 0 ? Math.round(c[C_BYTES_READ] / seconds) : 0,
    },
    statusCodes: out.statuses,
    errors: {
      total: c[C_SOCKET_ERRORS] + c[C_TIMEOUTS] + c[C_PARSE],
      timeouts: c[C_TIMEOUTS],
      byCode: out.errors,
      parse: c[C_PARSE],
    },
    connections: { opened: c[C_OPENED], closedByServer: c[C_CLOSED_BY_SERVER] },
    ...(open ? { schedule: { late: c[C_LATE], dropped: out.dropped, intended: out.intended, maxLagMs: round3(out.maxLagMs) } } : {}),
    timeline: out.timeline,
    generator: {
      cpuUserMs,
      cpuSystemMs,
      maxElu,
      workers: out.workers,
      saturated,
      warnings: [],
      ...(total > 0 ? { cpuPerRequestUs: round3(((cpuUserMs + cpuSystemMs) * 1000) / total) } : {}),
    },
    ...(out.stoppedEarly !== undefined ? { stoppedEarly: { reason: out.stoppedEarly } } : {}),
    ...(setup.length > 0 ? { setup } : {}),
  };
  result.generator.warnings = [...plan.warnings, ...warnings(result)];
  return result;
}

function warnings(r: LoadResult): string[] {
  const out: string[] = [];
  if (r.generator.saturated) {
    const busiest = r.generator.workers.reduce((a, b) => (b.elu > a.elu ? b : a));
    out.push(
      `The load generator was the bottleneck: worker ${busiest.worker} was busy ${Math.round(busiest.elu * 100)}% of the time ` +
        `(threshold ${GENERATOR_SATURATION_ELU * 100}%). The server may be faster than measured: add workers (-w) on spare cores, ` +
        'or run the generator on another machine.',
    );
  }
  const s = r.schedule;
  if (s !== undefined && s.intended > 0 && s.dropped / s.intended > SCHEDULE_MISS_WARNING) {
    out.push(
      `${s.dropped} of ${s.intended} planned sends were never made: every connection was busy until the end. ` +
        'Their wait is not in the latency; raise --connections (or --pipelining) so the schedule can be kept.',
    );
  }
  if (s !== undefined && s.intended > 0 && s.late / s.intended > SCHEDULE_MISS_WARNING) {
    out.push(
      `${s.late} sends (${((100 * s.late) / s.intended).toFixed(1)}%) left late (worst ${s.maxLagMs} ms): ` +
        'no connection was free at their planned time (or the generator was busy). Latency still counts from the planned time.',
    );
  }
  const failedSetup = r.setup?.filter((x) => x.error !== undefined || (x.status ?? 0) >= 400) ?? [];
  for (const x of failedSetup) out.push(`Setup request ${x.method} ${x.path} failed: ${x.error ?? `status ${x.status}`}.`);
  if (r.stoppedEarly !== undefined)
    out.push(`Stopped early (${r.stoppedEarly.reason}): the numbers cover ${(r.durationMs / 1000).toFixed(1)} s.`);
  return out;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
