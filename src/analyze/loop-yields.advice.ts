// Advice for loop-yields findings (Markdown).

export const loopYieldsAdvice =
  'Yield between chunks of work, not between items. Each `await` of a `setImmediate` ' +
  '(or of a promise it resolves) costs a full turn of the event loop (a poll for I/O, the timers, the callbacks of ' +
  'every other request in flight) plus a promise, far more than comparing or copying one small item; a request that ' +
  "yields per item waits behind every other request's turns, over and over. Loop over the items directly when the " +
  'whole job takes a millisecond or two; when it takes longer, process them in batches and yield once a few ' +
  'milliseconds of work have run (`if (performance.now() - start > 5) { await yieldToLoop(); start = performance.now(); }`), ' +
  'or move the job to a worker thread (piscina) so the loop keeps serving.';
