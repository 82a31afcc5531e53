// Advice for timer-leak findings (Markdown).

export const timerLeakAdvice = (kind: 'timeout' | 'interval') => kind === 'interval'
  ? 'Every `setInterval` needs a matching `clearInterval` when its request or connection ends; ' +
    'create periodic jobs once at startup, not per request. Keep the handle and clear it in a `close` or `finish` handler.'
  : 'Clear per-request timeouts when the request finishes (`res.on(\'finish\', () => clearTimeout(t))`), ' +
    'or use one shared timer wheel; each pending timer holds its closure (and the request) in memory.';
