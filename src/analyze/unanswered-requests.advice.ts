// Advice for unanswered-requests findings (Markdown).

export const unansweredAdvice = [
  'Find the code path that returns without answering: a middleware or handler branch that neither',
  'calls `res.end()`/`res.send()` nor `next()`, an `async` handler whose error is caught and dropped,',
  'a callback or promise that never settles (an upstream call without a timeout). Send the request',
  'that hangs with `curl -m 5 -v` and log where it stops; give every outgoing call a timeout',
  '(`AbortSignal.timeout()`), and set `server.requestTimeout` so a hung request is at least closed.',
].join(' ');
