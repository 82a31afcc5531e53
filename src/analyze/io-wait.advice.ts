// Advice for io-wait findings, by what the server waits on (Markdown).

const byResource: Record<string, string> = {
  Timeout: 'Requests wait on timers: look for `setTimeout`-based delays, polling or retry back-off on the request path.',
  TCPSocketWrap:
    'Requests wait on outgoing connections (a database, another service): check the pool size ' +
    "(undici `connections`, the driver's pool), timeouts and the latency of that service; run independent calls in parallel.",
  FSReqCallback:
    'Requests wait on the file system: the libuv thread pool (4 threads by default) may be the queue; ' +
    'cache reads or raise `UV_THREADPOOL_SIZE`.',
  FSReqPromise:
    'Requests wait on the file system: the libuv thread pool (4 threads by default) may be the queue; ' +
    'cache reads or raise `UV_THREADPOOL_SIZE`.',
  GetAddrInfoReqWrap: 'Requests wait on DNS lookups (`dns.lookup` runs on the thread pool): reuse connections, cache lookups.',
  IPC:
    'Requests wait for answers from another process or thread (messages over IPC, `postMessage`): each round trip ' +
    "costs the other side's work plus two hand-overs. Ask for all the items in one message, cache answers that do not " +
    'change per request, or do the work in-process when it is small.',
};

/** Several waits per request, end to end about the request's latency: they run one after another. */
export const sequentialWaitsAdvice =
  'Each request waits for these one after another: when they do not depend on each other, ' +
  'start them together and await them at once (`await Promise.all([...])`), so a request waits for the slowest, not for the sum.';

/** Requests queue for a few slots: the limit, not the wait itself, sets the latency. */
export const queuedAdvice =
  'Requests queue for a turn at a bounded resource: a connection pool (`max`), a ' +
  'semaphore or `p-limit`, a mutex, a single-connection client. Raise the limit to the concurrency the requests need ' +
  '(within what the database or service allows), hold a slot for less time (no unrelated awaits while holding a ' +
  'connection; release it in `finally`), or queue less work per request.';

/** node:http calls wait in their http.Agent's queue: its socket limit sets the latency, not the upstream. */
export const agentPoolAdvice =
  'The calls wait in the queue of their `http.Agent`: `maxSockets` caps its connections to each ' +
  'origin, and a call that finds them all busy waits for one to free up. Raise `maxSockets` (or the pool size of the client ' +
  'you use) toward the number of calls you need in flight at once, within what the upstream allows; or make fewer calls: ' +
  'cache the answer for a while, batch several into one, or share one call between the requests that need the same answer. ' +
  'A faster upstream helps only in proportion: every call also waits for the ones queued before it.';

/** Commands on a database or cache connection, one after another per request: batch them. */
export const serialCommandsAdvice =
  'Each request sends these commands one after another and waits for each answer before the next: ' +
  'fetch the items in one command instead (Redis `MGET` or a pipeline, memcached multi-get, SQL `WHERE id IN (...)` or `= ANY($1)`, ' +
  'a DataLoader that batches the keys of one tick), or, when they must stay separate, send them together and await them at once ' +
  '(`await Promise.all(...)`, bounded with `p-limit` for long lists), so a request waits about one round trip, not one per item.';

export function ioWaitAdvice(resource: string | undefined, sequential = false, queued = false, pooled = false, commands = false): string {
  const general =
    'The server is mostly idle while requests take long: the time goes to waiting, not computing. ' +
    'Find what each request awaits (a downstream call, a pool, a lock, a timer) and run independent waits concurrently.';
  const specific = pooled
    ? [agentPoolAdvice]
    : queued
      ? [queuedAdvice]
      : [
          sequential ? (commands ? serialCommandsAdvice : sequentialWaitsAdvice) : undefined,
          resource ? byResource[resource] : undefined,
        ].filter((x) => x !== undefined);
  return [...specific, general].join('\n\n');
}
