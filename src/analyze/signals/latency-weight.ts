// How much one interval's server latency counts when intervals are combined: the requests it
// finished, when any of them was timed. The agent times a random sample of the requests on a
// busy thread (protocol: http.latency), so the timed count understates the requests an
// interval's latency describes, and its share changes with the rate.

import type { SampleMessage } from '../../agent/protocol.js';

export function latencyWeight(http: NonNullable<SampleMessage['http']>): number {
  return http.latency.count > 0 ? Math.max(http.finished, http.latency.count) : 0;
}
