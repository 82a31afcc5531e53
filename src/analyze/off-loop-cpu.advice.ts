// What to do when CPU work off the event loop is the bottleneck.

export type OffLoopKind = 'thread-pool' | 'worker-threads';

export function offLoopAdvice(kind: OffLoopKind | undefined, pooled = false): string {
  if (pooled) {
    return (
      'The app already keeps its workers, but requests queue for them: every task a worker takes holds it until it is ' +
      'done, and the others wait in the pool. Make each task cheaper or cache its result (the same input priced again per ' +
      'request), send less work per request, or size the pool to the cores (os.availableParallelism() - 1 workers): ' +
      'more workers than cores does not add CPU, it only moves the queue.'
    );
  }
  if (kind === undefined) return `${offLoopAdvice('thread-pool')}\n\n${offLoopAdvice('worker-threads')}`;
  if (kind === 'worker-threads') {
    return (
      'Create the workers once and reuse them: a pool sized to the cores (piscina, or a fixed set of Workers fed by ' +
      'postMessage) instead of a new Worker per request. Starting a Worker boots a whole Node.js instance (tens of ms ' +
      'of CPU), usually far more than the work it is given. For small jobs, doing them inline is cheaper still.'
    );
  }
  return (
    "Each async crypto or zlib call holds one of libuv's threads (4 unless UV_THREADPOOL_SIZE is set, before the " +
    'process starts) until it is done, and everything else that uses the pool (fs, dns.lookup) queues behind it. Make ' +
    'each call cheaper where the cost is a setting (pbkdf2/scrypt work factors tuned for logins, not every request; ' +
    'zlib level 1-6), cache results (a verified token or session instead of re-deriving a key per request), and size ' +
    'the pool to the cores: UV_THREADPOOL_SIZE=<cores> in the environment. More threads than cores does not add CPU.'
  );
}
