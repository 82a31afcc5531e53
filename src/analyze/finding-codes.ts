// The one registry of finding codes. Every finding an analyzer (or analyze-run's own steps)
// emits has a `HOTPATH_*` code listed here and documented in docs/findings.md (a test keeps the
// two in step, as test/errors.test.ts does for the error codes). Readers match on `code`.

export const findingCodes = {
  HOTPATH_EVENT_LOOP_BLOCKING: 'A function holds the event loop',
  HOTPATH_LOOP_YIELDS: 'A loop yields to the event loop once per item',
  HOTPATH_EVENT_LOOP_STUCK: 'The event loop never came back',
  HOTPATH_SYNC_IO: 'Synchronous I/O or crypto on the request path',
  HOTPATH_GC_PRESSURE: 'Garbage collection takes a large share of the time',
  HOTPATH_MEMORY_LEAK: 'The heap grows with the requests served',
  HOTPATH_EXTERNAL_MEMORY_LEAK: 'Memory off the heap (Buffers) grows with the requests served',
  HOTPATH_HEAP_GROWTH_UNCONFIRMED: 'The heap grew, but too few full GCs ran to call it a leak',
  HOTPATH_HANDLE_LEAK: 'Handles (sockets, timers, files) are left open per request',
  HOTPATH_LISTENER_LEAK: 'Event listeners pile up per request',
  HOTPATH_HANDLER_GROWTH: 'Routes or middleware are registered per request',
  HOTPATH_TIMER_LEAK: 'Timers or intervals pile up per request',
  HOTPATH_IO_WAIT: 'Requests wait on I/O (outgoing calls, the thread pool)',
  HOTPATH_SERIALIZATION: 'JSON parsing or serialization takes a large share of the time',
  HOTPATH_CONNECTION_CHURN: 'Client connections are opened and closed instead of reused',
  HOTPATH_OUTGOING_CONNECTION_CHURN: 'Outgoing connections are opened per call instead of reused',
  HOTPATH_UNANSWERED_REQUESTS: 'Requests get no answer',
  HOTPATH_OFF_LOOP_CPU: 'CPU burnt off the event loop (worker threads, the thread pool)',
  HOTPATH_LATENCY_CREEP: 'Latency rises over the run under constant load',
  HOTPATH_LOAD_GENERATOR_BOUND: 'The load generator, not the server, was the limit',
  HOTPATH_HEALTHY: 'Nothing to fix was found',
  HOTPATH_INCOMPLETE: 'The run lacks the evidence a verdict needs',
  HOTPATH_SETUP_FAILED: 'The setup requests failed',
  HOTPATH_ANALYZER_FAILED: 'One analyzer could not read the run; the others stand',
  HOTPATH_SOCKET_WRITES: 'The socket write path (many small writes) takes a large share of the CPU',
  HOTPATH_CLUSTER_PRIMARY: "The cluster primary's work grows with the rate of new connections",
  HOTPATH_LOAD_OFF_TARGET: 'Most responses of the load were redirects or errors: it measured those, not the app',
  HOTPATH_TARGET_ENDED: 'The server crashed or exited during the run',
} as const satisfies Record<`HOTPATH_${string}`, string>;

export type FindingCode = keyof typeof findingCodes;
