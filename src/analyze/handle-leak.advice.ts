// What each kind of handle is, in words, and the advice for handle-leak findings (Markdown).

export interface HandleKind {
  /** Plural noun phrase: "fs.watch watchers". */
  noun: string;
  /** What one of them holds while open. */
  holds: string;
  /** Holds a file descriptor: the process's limit (often 1,024) ends in EMFILE. */
  fd: boolean;
  advice: string;
}

const FD_LIMIT =
  'Each holds a file descriptor: at the process limit (`ulimit -n`, often 1,024) new connections and file opens fail with `EMFILE`.';

const KINDS: Record<string, HandleKind> = {
  FSEventWrap: {
    noun: 'fs.watch watchers',
    holds: 'an OS file watch and its listener, which runs on every change of the file (all of them, for one edit)',
    fd: false,
    advice:
      'Watch a file once, at startup (or keep one watcher per path in a map), not on the request path, and `close()` ' +
      'watchers that are no longer needed. To pick up edits to a config file, keep one watcher that reloads a module-level ' +
      'value the requests read, or re-read the file on a timer.',
  },
  StatWatcher: {
    noun: 'fs.watchFile watchers',
    holds: "a timer polling the file's `stat`",
    fd: false,
    advice: 'Call `fs.watchFile` once per file at startup and `fs.unwatchFile` when done; prefer one `fs.watch` watcher.',
  },
  TCPSocketWrap: {
    noun: 'TCP sockets',
    holds: 'a connection, its buffers and a file descriptor',
    fd: true,
    advice:
      'End every connection the app opens once it is done with it (`socket.end()`, and `socket.destroy()` on error and ' +
      'timeout), or better, open one long-lived connection (or a small pool) at startup and write every message to it. For ' +
      'HTTP, share one `http.Agent` with `keepAlive` (or the global one) instead of creating an agent per request.',
  },
  PipeWrap: {
    noun: 'pipes',
    holds: "a Unix-socket connection or a child process's stdio stream, and a file descriptor",
    fd: true,
    advice:
      'End Unix-socket connections when done (`socket.end()`/`destroy()`), or keep one open; for child processes, read ' +
      "or destroy their stdio streams and make sure they exit (`stdio: 'ignore'` when the output is not needed).",
  },
  ProcessWrap: {
    noun: 'child processes that never exit',
    holds: 'a whole process, its stdio pipes and their file descriptors',
    fd: true,
    advice:
      'Do not start a long-running child per request: start one at startup and send it work (or use a worker pool), ' +
      'and bound the ones you start (`timeout` and `killSignal` options, `child.kill()` when the request ends).',
  },
  UDPWrap: {
    noun: 'UDP sockets',
    holds: 'a bound socket and a file descriptor',
    fd: true,
    advice:
      'Create one `dgram` socket at startup and reuse it for every message (metrics clients do), or `close()` each ' +
      'socket once its message is sent.',
  },
  TCPServerWrap: {
    noun: 'listening TCP servers',
    holds: 'a listening socket and a file descriptor',
    fd: true,
    advice: 'Start servers once, at startup; `close()` any server started for a task once the task is done.',
  },
  PipeServerWrap: {
    noun: 'listening Unix-socket servers',
    holds: 'a listening socket and a file descriptor',
    fd: true,
    advice: 'Start servers once, at startup; `close()` any server started for a task once the task is done.',
  },
  MessagePort: {
    noun: 'MessagePorts',
    holds: "a message channel end (`MessageChannel`, `BroadcastChannel`, a worker's port)",
    fd: false,
    advice: 'Create channels once, or `close()` both ends of a `MessageChannel` (and `BroadcastChannel`s) when the request is done.',
  },
  Timeout: {
    noun: 'timers',
    holds: 'its callback and what the callback captured',
    fd: false,
    advice:
      'Clear timers when the work they guard is done (`clearTimeout`, an `AbortSignal` for `timers/promises`), and do ' +
      "not start a periodic or self-rescheduling timer per request. The agent's timer hook did not see these (run without " +
      "`--no-hooks`, or they come from a library's own timer API), so their creation site is not known.",
  },
};

/** The words and advice for an active-resource type; a generic entry for the others. */
export function handleKind(type: string): HandleKind {
  return (
    KINDS[type] ?? {
      noun: `${type} handles`,
      holds: 'a native handle',
      fd: false,
      advice: `Close each ${type} handle once its work is done, or create one at startup and reuse it, instead of one per request.`,
    }
  );
}

/** Sockets the HTTP client behind fetch kept for responses whose bodies were never read. */
const FETCH_BODY =
  'With `fetch`, read or cancel every response body, also when only the status is needed ' +
  '(`await res.arrayBuffer()`, `await res.body?.cancel()`, or a `HEAD` request): undici returns a connection to its pool only ' +
  'once the body is consumed, and an unread body larger than its buffer holds the socket until the `Response` is garbage collected.';

export function handleLeakAdvice(kind: HandleKind, unrefOnly: boolean, clientApi?: string): string {
  if (clientApi === 'fetch') return `${FETCH_BODY} ${handleLeakAdvice(kind, unrefOnly)}`;
  const unref = unrefOnly
    ? " Being unref'd (`persistent: false`, `.unref()`) only lets the process exit while they are open: they are still held, " +
      'and `process.getActiveResourcesInfo()` no longer lists them.'
    : '';
  return `${kind.advice}${kind.fd ? ` ${FD_LIMIT}` : ''}${unref}`;
}
