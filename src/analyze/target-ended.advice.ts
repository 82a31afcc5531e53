// Advice for HOTPATH_TARGET_ENDED findings (Markdown), by how the target ended.

import type { EndKind } from './target-ended.js';

export const targetEndedAdvice: Record<EndKind, string> = {
  'uncaught-exception': [
    'An exception nothing caught ends a Node process, and every request in flight with it. Fix the error at the',
    'place named (its stack is in `target.log`); handle errors where a request is answered (a `try`/`catch` around',
    "the handler's work, the framework's error handler) so one bad request gets a 500 instead of killing the server.",
    "A `process.on('uncaughtException')` that keeps the process running is no fix: its state may be broken.",
  ].join(' '),
  'unhandled-rejection': [
    'A promise rejected with nothing to catch it ends the process (Node 15+). `await` the call inside a',
    '`try`/`catch`, or attach a `.catch()` where the promise is created; an `async` route handler of a framework',
    'that does not await it (Express 4) needs its own `try`/`catch` or a wrapper that passes the error to `next`.',
  ].join(' '),
  'out-of-memory': [
    'The heap reached its limit: something kept memory across requests (see the memory-leak finding when there',
    'is one), or one request needs more than the process may hold. Fix what grows rather than raising the limit',
    '(`--max-old-space-size`): a larger heap only delays the crash. `hotpath run --heap` names what was allocated',
    'and what was still held.',
  ].join(' '),
  'fatal-error': 'V8 or Node aborted the process: the message above says why, and `target.log` holds the rest of its output.',
  signal: [
    "Something outside the process killed it. SIGKILL with no other word is often the kernel's out-of-memory killer",
    "(check `dmesg` or the container's memory limit); SIGSEGV or SIGBUS a native addon; SIGABRT an abort in native code.",
  ].join(' '),
  'exit-call': [
    'The process exited with a failure code and printed no uncaught error: app code (or a library) called',
    '`process.exit()`, or a handler of `uncaughtException` did. Look for the call near the last lines of `target.log`;',
    'a server should answer the request with an error and keep serving instead of exiting.',
  ].join(' '),
  exit: [
    'The process exited with code 0 while it was being loaded: app code called `process.exit(0)`, or it closed its',
    'server and let the event loop run out. Nothing it served after that was measured.',
  ].join(' '),
};
