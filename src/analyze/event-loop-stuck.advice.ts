// Advice for event-loop-stuck findings (Markdown).

export const loopStuckAdvice =
  'Find why the code on this stack never returns: a loop whose exit condition never ' +
  'becomes true (an index that never moves, a retry without a limit), a `while` waiting for state that another ' +
  'callback would set (which can never run while the loop is held: wait with a promise or an event instead), or ' +
  'recursion through a cycle in the data. Until it returns, the process accepts connections (the kernel does) but ' +
  'answers nothing, and health checks, timers and signal handlers never run. Bound the work (a maximum number of ' +
  'iterations or a deadline), and move long jobs such as a cache warm-up off the event loop (a worker thread, or ' +
  'batches that yield between them) so the server serves while they run.';
