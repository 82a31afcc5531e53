// Telemetry deltas: event-loop utilization and delay p99, GC share, heap growth over the window,
// RSS and CPU per request, from each run's telemetry summary (report.json's `telemetry`).

import type { TelemetrySummary } from '../report/report-schema.js';
import type { MetricChange } from '../report/compare-schema.js';
import { plainChange } from './metric-verdict.js';

const cpuPerRequestUs = (t: TelemetrySummary, requests: number) => (requests > 0 ? ((t.cpu.userMs + t.cpu.systemMs) * 1000) / requests : 0);

export function compareTelemetry(
  before: TelemetrySummary,
  beforeRequests: number,
  after: TelemetrySummary,
  afterRequests: number,
): MetricChange[] {
  return [
    plainChange('event-loop utilization', 'share', before.eventLoop.utilizationMean, after.eventLoop.utilizationMean),
    plainChange('event-loop delay p99', 'ms', before.eventLoop.delayP99Ms, after.eventLoop.delayP99Ms),
    plainChange('GC share', 'share', before.gc.shareOfWall, after.gc.shareOfWall),
    plainChange(
      'heap growth',
      'bytes',
      before.memory.heapUsedEndBytes - before.memory.heapUsedStartBytes,
      after.memory.heapUsedEndBytes - after.memory.heapUsedStartBytes,
    ),
    plainChange('RSS max', 'bytes', before.memory.rssMaxBytes, after.memory.rssMaxBytes),
    plainChange('CPU per request', 'µs', cpuPerRequestUs(before, beforeRequests), cpuPerRequestUs(after, afterRequests)),
  ];
}
