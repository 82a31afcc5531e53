// Advice for timer-leak findings (Markdown).

export const timerLeakAdvice = (kind: 'timeout' | 'interval' | 'expiry' | 'rearm') =>
  kind === 'rearm'
    ? 'A loop that re-arms a timer (`await sleep()` in a `while` loop or a recursive call, a `setTimeout` callback that ' +
      'schedules itself) runs until something stops it, and here one is started per request and none ever stops: each ' +
      'keeps its timer, its closure and what that captured. Give the loop an exit (stop once the job is done or gone, after ' +
      'a number of attempts, or on an `AbortSignal` aborted when the work is dropped), and prefer one shared poller for all ' +
      'pending jobs, started once, over a loop per request.'
    : kind === 'expiry'
      ? 'These are long timeouts, one per entry, to expire it later (a session or cache TTL): until then each keeps its ' +
        'timer, its closure and the entry in memory, and at this rate they pile up by the thousand. Expire entries in one ' +
        'periodic sweep (one `setInterval` at startup that drops what is older than the TTL), or use a cache with a size ' +
        'bound and a TTL; and do not create an entry for a request that will never come back (no session cookie).'
      : kind === 'interval'
        ? 'Every `setInterval` needs a matching `clearInterval` when its request or connection ends; ' +
          'create periodic jobs once at startup, not per request. Keep the handle and clear it in a `close` or `finish` handler.'
        : "Clear per-request timeouts when the request finishes (`res.on('finish', () => clearTimeout(t))`), " +
          'or use one shared timer wheel; each pending timer holds its closure (and the request) in memory.';
