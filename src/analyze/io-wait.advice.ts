// Advice for io-wait findings, by what the server waits on (Markdown).

const byResource: Record<string, string> = {
  Timeout: 'Requests wait on timers: look for `setTimeout`-based delays, polling or retry back-off on the request path.',
  TCPSocketWrap: 'Requests wait on outgoing connections (a database, another service): check the pool size ' +
    '(undici `connections`, the driver\'s pool), timeouts and the latency of that service; run independent calls in parallel.',
  FSReqCallback: 'Requests wait on the file system: the libuv thread pool (4 threads by default) may be the queue; ' +
    'cache reads or raise `UV_THREADPOOL_SIZE`.',
  FSReqPromise: 'Requests wait on the file system: the libuv thread pool (4 threads by default) may be the queue; ' +
    'cache reads or raise `UV_THREADPOOL_SIZE`.',
  GetAddrInfoReqWrap: 'Requests wait on DNS lookups (`dns.lookup` runs on the thread pool): reuse connections, cache lookups.',
};

export function ioWaitAdvice(resource: string | undefined): string {
  const general = 'The server is mostly idle while requests take long: the time goes to waiting, not computing. ' +
    'Find what each request awaits (a downstream call, a pool, a lock, a timer) and run independent waits concurrently.';
  return resource && byResource[resource] ? `${byResource[resource]}\n\n${general}` : general;
}
