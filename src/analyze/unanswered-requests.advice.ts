// Advice for unanswered-requests findings (Markdown).

export const unansweredAdvice = [
  'Find the code path that returns without answering: a middleware or handler branch that neither',
  'calls `res.end()`/`res.send()` nor `next()`, an `async` handler whose error is caught and dropped,',
  'a callback or promise that never settles (an upstream call without a timeout). Send the request',
  'that hangs with `curl -m 5 -v` and log where it stops; give every outgoing call a timeout',
  '(`AbortSignal.timeout()`), and set `server.requestTimeout` so a hung request is at least closed.',
].join(' ');

/** The hung requests wait on outgoing calls that never get an answer. */
export const hungCallAdvice =
  'The requests wait on outgoing calls that never return: give every outgoing call a ' +
  'timeout (`AbortSignal.timeout()` for fetch, `timeout` plus a `timeout` handler that destroys the request for ' +
  'node:http) and answer the client when it fires.';

/** ...queued in an http.Agent whose sockets never come free: responses whose body is never read. */
export const socketsHeldAdvice =
  'The calls queue in their http.Agent because every socket stays busy: a response ' +
  'whose body is never read (or a request never ended) keeps its socket forever. Read every response to the end ' +
  '(`res.resume()` when the body is not needed) or destroy it, end every request, and give the calls a timeout.';
