// The shape of load.json (the LoadResult, src/load/load-result.ts) as the report reads it: a
// file of another shape is left out with a warning rather than failing the report.

import { arrayOf, bool, num, opt, record, shape, str, type Check } from './shape.js';

const latency = shape({
  count: num,
  min: num,
  mean: num,
  stdev: num,
  p50: num,
  p75: num,
  p90: num,
  p97_5: num,
  p99: num,
  p999: num,
  p9999: num,
  max: num,
});

export const isLoadResult: Check = shape({
  url: str,
  start: num,
  end: num,
  durationMs: num,
  options: shape({
    connections: num,
    pipelining: num,
    workers: num,
    warmup: num,
    timeoutMs: num,
    keepalive: bool,
    method: str,
    duration: opt(num),
    amount: opt(num),
    rate: opt(num),
  }),
  requests: shape({ total: num, sent: num, perSecond: num, inFlightAtEnd: num }),
  latency,
  serviceTime: opt(latency),
  throughput: shape({ bytesRead: num, bytesWritten: num, bytesReadPerSecond: num }),
  statusCodes: record(num),
  errors: shape({ total: num, timeouts: num, byCode: record(num), parse: num }),
  connections: shape({ opened: num, closedByServer: num }),
  schedule: opt(shape({ late: num, dropped: num, intended: num, maxLagMs: num })),
  timeline: arrayOf(shape({ second: num, requests: num, errors: num, bytesRead: num, p50: num, p99: num })),
  generator: shape({
    cpuUserMs: num,
    cpuSystemMs: num,
    maxElu: num,
    saturated: bool,
    warnings: arrayOf(str),
    workers: arrayOf(shape({ worker: num, connections: num, elu: num })),
  }),
});
