// Advice for timer-leak findings (Markdown).

export const timerLeakAdvice = (kind: 'timeout' | 'interval' | 'expiry') => kind === 'expiry'
  ? 'These are long timeouts, one per entry, to expire it later (a session or cache TTL): until then each keeps its ' +
    'timer, its closure and the entry in memory, and at this rate they pile up by the thousand. Expire entries in one ' +
    'periodic sweep (one `setInterval` at startup that drops what is older than the TTL), or use a cache with a size ' +
    'bound and a TTL; and do not create an entry for a request that will never come back (no session cookie).'
  : kind === 'interval'
  ? 'Every `setInterval` needs a matching `clearInterval` when its request or connection ends; ' +
    'create periodic jobs once at startup, not per request. Keep the handle and clear it in a `close` or `finish` handler.'
  : 'Clear per-request timeouts when the request finishes (`res.on(\'finish\', () => clearTimeout(t))`), ' +
    'or use one shared timer wheel; each pending timer holds its closure (and the request) in memory.';
