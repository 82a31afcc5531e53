// Advice for sync-io findings, by API family (Markdown).

const byFamily: Record<string, string> = {
  crypto:
    'Use the callback or promise form (`crypto.pbkdf2`, `crypto.scrypt`, `crypto.randomBytes` with a callback): ' +
    'libuv runs it on the thread pool and the loop keeps serving other requests. For sustained hashing load, ' +
    'raise `UV_THREADPOOL_SIZE` or move it to a worker pool (piscina).',
  fs: 'Use `fs.promises` (or the callback API) on the request path, or read the file once at startup and keep it in memory.',
  zlib: 'Use the asynchronous zlib functions or streams (`zlib.gzip`, `zlib.createGzip()`); they run on the thread pool.',
  child_process:
    'Use `spawn`/`execFile` with callbacks instead of the `*Sync` variants; a child process blocks the loop for its whole life.',
};

/** console.log and process.stdout.write end in a synchronous write to a file, a pipe (Linux) or a terminal. */
const stdioAdvice =
  'Writes to stdout and stderr are synchronous when they go to a file, a terminal or (on Linux) a pipe, ' +
  'so `console.log` on the request path blocks the loop for every line. Log less per request, and use a logger that ' +
  'writes asynchronously (pino with `pino.destination({ sync: false })` or a transport on a worker thread).';

/** 'stdout' or 'stderr' for the agent's `fs.writeSync (stdout)` (console.log to a file). */
export const stdioStream = (api: string): string | undefined => /\((stdout|stderr)\)$/.exec(api)?.[1];

/** Writes a logging library makes synchronously (pino's `sync: true` destination, a file appender). */
const loggerWriteAdvice = (via: string) =>
  `The writes are made by ${via}, a logger writing synchronously: every line blocks the ` +
  'loop until the file takes it. Give it an asynchronous destination (pino: `pino.destination({ sync: false })`, the ' +
  'default, or a transport on a worker thread; a write stream for others), and log less per request: ids and the few ' +
  'fields you need, not whole objects.';
const write = /^fs\.(writeSync|writevSync|appendFileSync)/;

/** A module loaded again per request (deleted from require.cache): the loader's synchronous reads, and the Module kept each time. */
export const moduleReloadAdvice =
  'Load modules once, at startup. `require()` is synchronous, and a module deleted from ' +
  '`require.cache` to pick up changes is read, parsed and compiled again on every call; each reload also leaves a new ' +
  "`Module` with its exports in its parent's `children` list, so memory grows with every request. Keep the data in " +
  'memory and reload it when it changes: `fs.watch` (or a TTL) plus `fs.promises.readFile` and `JSON.parse`, swapping ' +
  'the object the requests read.';

export function syncIoAdvice(api: string, via?: string): string {
  if (stdioStream(api) !== undefined) return stdioAdvice;
  if (via !== undefined && write.test(api)) return loggerWriteAdvice(via);
  const family = api.split('.')[0];
  return byFamily[family] ?? `Replace \`${api}\` with its asynchronous form on the request path.`;
}
