// Advice for handler-growth findings (Markdown).

export const handlerGrowthAdvice = (route: string) =>
  [
    `Register ${route} once. A refresh job should replace the route's data (or swap a`,
    'router it owns) instead of adding another handler: every handler stays in the router stack',
    'and every request that walks past it pays for it.',
  ].join(' ');

export const koaGrowthAdvice = [
  'Call `app.use()` once per middleware, at startup, before `app.listen()` / `app.callback()`. Koa composes',
  'the chain then: a later `app.use` only grows `app.middleware` (a leak), and where the app builds a new',
  'callback per request, every copy runs on every request. For per-request behaviour (a feature flag), decide',
  'inside one middleware registered once.',
].join(' ');

export const workGrowthAdvice = [
  'Something accumulates on the request path: a list, a cache without eviction, a chain of',
  'handlers or listeners. Compare the hottest functions early and late in the run (`hotpath report`',
  'shows them) and bound what grows.',
].join(' ');

/** An AsyncLocalStorage constructed per request. */
export const asyncStorageAdvice = [
  'Create one `AsyncLocalStorage` at module scope and call `storage.run(store, next)` per request: `run` gives',
  'each request its own store, and a new instance per request is never needed. An instance that must go',
  'away calls `disable()`. On Node 20-22, running with `--experimental-async-context-frame` (the default',
  'from Node 24) also removes the per-await cost of enabled instances.',
].join(' ');
