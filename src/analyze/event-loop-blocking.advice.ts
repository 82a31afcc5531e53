// Advice for event-loop-blocking findings, by the kind of work that blocks (Markdown).

import { BUFFER_COPIES, FILE_READS, JSON_DEEP_COPY, SOURCE_MAPPED_STACKS } from '../profile/work-kind.js';
import type { EntryKind } from '../profile/entry-points.js';
import { bodyParseAdvice, deepCopyAdvice, parseAdvice } from './serialization.advice.js';

const byWork: Record<string, string> = {
  crypto:
    'Hashing and key derivation are CPU work: use the async crypto APIs (they run on the libuv thread pool), ' +
    'hash less data (a cheap key instead of a content hash), or cache the result.',
  json:
    'Serialize less: cache the serialized string of data that does not change, trim the payload, or use a ' +
    'schema-based serializer (fast-json-stringify, fastify response schemas).',
  regex:
    'Regular expressions dominate. Two causes look alike here: one pattern that is slow on some inputs, and ' +
    'many cheap passes. A pattern with nested quantifiers (`(a+)+`, `(\\w+\\.?)*@`) can backtrack for milliseconds on ' +
    'one input: rewrite it without the nesting, anchor it, and bound the input length. Many passes (several ' +
    '`.replace()` calls per field, per row) cost by volume: make one pass with one pattern and a lookup table, or ' +
    'escape once when the data is stored. A RegExp built per request (`new RegExp(...)` from a list or config) is ' +
    'compiled again each time, and the time shows on the line that first uses it: build it once at startup, or test ' +
    'against a Set for word lists.',
  inspect:
    'Formatting objects with `util.inspect` dominates: `console.log` of an object, `%o`/`%j` in `util.format`, ' +
    'or a logger printing whole objects (`depth: null`) costs by the size of the object, on every call. Log ids and the ' +
    'few fields you need, not whole requests or results; use a logger that writes JSON (pino) and never inspects deeply ' +
    'on the request path.',
  vm:
    'Creating `vm` contexts and compiling scripts dominates: `vm.runInNewContext` builds a new V8 context (a fresh ' +
    'set of globals) and compiles the code on every call. Compile once (`new vm.Script(code)`, cached by source) and ' +
    'run it in one context made at startup, or turn the rule into a plain function once.',
  zlib:
    'Compression runs synchronously here: use the async zlib API or streams, lower the level, or compress ' +
    'once and cache static responses.',
  'zlib-async':
    'Async zlib calls cost the loop a stream and a native handle each (the compression itself runs on the ' +
    'thread pool): compress once and cache responses that repeat, skip bodies under about 1 KB, and compress ' +
    'one stream per response rather than many small buffers.',
  fs:
    'File-system work runs on the loop: a `*Sync` call (`readFileSync`, `statSync`, `existsSync`) waits for the disk ' +
    "there, and every call pays a pass through Node's fs layer. Read at startup and cache, use the fs.promises API " +
    'instead of the `*Sync` calls, and make fewer calls.',
  buffer: 'Buffer/string conversions dominate: avoid converting large payloads back and forth per request.',
  net:
    'The time goes to socket writes. Many small `res.write()` calls each cost a syscall and a stream pass: build ' +
    'the body in memory and send it with one `res.end(body)`, or wrap the writes in `res.socket.cork()` / ' +
    '`uncork()`. Large bodies cost by their size: send less, compress once and cache. When a response is streamed in ' +
    "parts, respect back-pressure: `res.write()` returning `false` means the client is behind, so wait for `'drain'` " +
    '(or `stream.pipeline()` a Readable into `res`); writing on regardless queues the whole body in memory per request.',
  'http-client':
    "The time goes to the HTTP client's own work (fetch/undici, http.request): building each request, " +
    'parsing its response, and the socket and stream machinery of every call. It is paid per call: make fewer calls (one ' +
    'batch request for many items, answers cached across requests), and keep connections alive (the global fetch does; ' +
    'an `http.Agent` needs `keepAlive: true`) so no call pays a handshake.',
  stream:
    'The time goes to stream machinery: many small writes or pipes per request. Batch the data into larger ' +
    'chunks, or build the body and send it with one `res.end(body)`.',
  intl:
    'Locale formatting dominates: `new Intl.NumberFormat(...)` / `DateTimeFormat` / `Collator`, and the ' +
    '`toLocaleString(locale, options)` and `localeCompare` shortcuts, which build one per call, load and resolve locale ' +
    'data each time, which costs far more than the formatting. Create one formatter per locale and options (at startup, ' +
    "or cached in a Map) and call its `format()`; sort with one `Intl.Collator`'s `compare`.",
  errors:
    'Creating Error objects dominates: every `new Error()` (and every subclass) captures a stack trace, frame by ' +
    'frame. Errors thrown as control flow for expected outcomes (a validation failure per field, a cache miss, a ' +
    'not-found) pay it on every request: return a result or collect plain objects instead, and throw only for the ' +
    'unexpected. Where an Error must be built on a hot path, build it once, or capture fewer frames.',
  search:
    'Linear searches dominate (`Array.prototype.some`, `find`, `findIndex`, `includes`, `indexOf`): run once per ' +
    'item of another list, each one scans the list again, so the work grows with the product of the two sizes ' +
    '(quadratic when it is the same list). Index the items once in a `Map` or `Set` (by id, sku, name) and look them ' +
    'up in constant time.',
  'child-process':
    "Starting child processes dominates: each `spawn`, `exec` or `execFile` forks the server's process, " +
    "opens pipes for the child's stdio and waits until the child has started, milliseconds of the event loop in the " +
    'parent before the child does any work, and the child then takes a core of its own. Do not spawn per request: run ' +
    'the command once at startup (a commit hash, a version, a hostname) and keep its output, cache results by their ' +
    'input, or keep one long-lived child (a worker process) and send it requests over stdin or IPC; where a library ' +
    'does the job in process, call it instead of a command-line tool.',
  ipc:
    'IPC messages dominate: in a cluster worker under round-robin scheduling every new connection arrives from ' +
    'the primary as an IPC message with the socket attached, so the cost grows with the rate of new connections, not ' +
    'of requests. Keep connections alive from the proxy, or let the workers accept on their own (`cluster.schedulingPolicy = ' +
    'cluster.SCHED_NONE`); see HOTPATH_CLUSTER_PRIMARY in docs/findings.md. Outside a cluster: send fewer, smaller ' +
    '`process.send` messages (batch them).',
  compile:
    'Compiling code at run time dominates: `new Function(...)`, `eval(...)` and `vm` scripts are parsed and ' +
    'compiled on every call, and V8 reuses compiled code only for the exact same source text, so source that carries ' +
    "the request's data (values written into it with a template) is compiled anew each time. Compile once and cache " +
    "the function by its source (a `Map` from the rule's text), pass per-request data as arguments (`new " +
    "Function('cart', 'user', body)`) instead of writing it into the code, and compile rules when they are saved, " +
    'not when they are used.',
  clone:
    'Messages to and from worker threads are copied: `postMessage` serializes the whole object graph with the ' +
    'structured clone algorithm on the sending thread and the receiver rebuilds it, both on their event loops, so a ' +
    'large payload per request costs the main thread more than the work the worker does with it. Send the worker ' +
    'only what it needs (ids, a query, the few fields it reads) and keep large data in the worker (load it there once), ' +
    'send back only the result (totals, not the enriched input), and move bytes as transferable `ArrayBuffer`s ' +
    '(`postMessage(msg, [buf])`) or through a `SharedArrayBuffer` instead of cloning objects.',
  copy:
    'Spread copies dominate (`{ ...acc, [k]: v }`, `[...list, x]`): spreading a growing accumulator on every step ' +
    'of a `reduce` or loop copies everything gathered so far each time, which is quadratic. Mutate the accumulator ' +
    'inside the reducer (`(acc[k] ??= []).push(x)`) or build with a plain loop, and copy once at the end if the result ' +
    'must be fresh.',
};

/** Where the label of the dominant work says more than its kind. */
const byLabel: Record<string, string> = {
  [BUFFER_COPIES]:
    'Copying bytes dominates. `Buffer.concat` (or `Buffer.from`/`copy` into a bigger buffer) in a loop ' +
    'copies everything gathered so far on each pass, which is quadratic: collect the chunks in an array and concat ' +
    'once at the end, or write them out as a stream. Reuse buffers instead of allocating one per item.',
  [FILE_READS]:
    'Whole files are read into memory per request. `fs.promises.readFile` is asynchronous, but Node ' +
    'reads the file chunk by chunk from the event loop into one buffer the size of the file, and a large buffer per ' +
    'request fills the heap (garbage collection climbs with it). Read the file once at startup and keep it (read it ' +
    'again when it changes), read only the bytes you need (`const fh = await fs.promises.open(path)`, then ' +
    '`fh.read(buffer, 0, length, position)`), or stream it to the response (`stream.pipeline(fs.createReadStream(path), ' +
    'res)`) instead of buffering it.',
  [SOURCE_MAPPED_STACKS]:
    'Stack traces are mapped through source maps on the request path: with `--enable-source-maps` Node maps every ' +
    "frame of an Error's `.stack` when it is read, which costs several times the capture itself (Node's docs warn of " +
    'it). A logger that takes its call site from `new Error().stack` pays it on every line: drop the call site from ' +
    'routine lines (or keep it for debug level), read `.stack` only for errors you report, or log the compiled ' +
    'position and map it when the log is read.',
  'JSON.parse': parseAdvice,
  [JSON_DEEP_COPY]: deepCopyAdvice,
};

/** Where the way the work was scheduled is the thing to change (see src/profile/entry-points.ts). */
const byEntry: Partial<Record<EntryKind, string>> = {
  nextTick:
    'The work runs in `process.nextTick` callbacks. Node runs every queued nextTick callback, and the ones ' +
    'they queue, before it goes back to I/O: a queue drained one `nextTick` at a time holds every socket until it is ' +
    'empty. Schedule the chunks with `setImmediate` (one turn of the loop each, I/O in between), process the queue in ' +
    'batches of bounded size, or move it off the request path.',
  timer:
    'The work runs in a timer callback (`setTimeout`/`setInterval`): a background job, not the request path, ' +
    'holds the loop while requests wait. Make the job incremental (a bounded slice per turn, yielding with ' +
    '`setImmediate`), run it in a worker thread or another process, or run it less often.',
};

/** HTTP client calls awaited one at a time: each request also waits for their sum. */
export const sequentialCallsAdvice =
  'Each request makes these calls one after another: when they do not depend on each ' +
  'other, start them together and await them at once (`await Promise.all(items.map(fetchItem))`), so a request waits for ' +
  'the slowest, not for the sum; better still, fetch the items in one batch request.';

/**
 * Kinds of work whose fix is to do less of it in place (an algorithm, a formatter made once, fewer
 * writes), not to move it: the generic "cache it or move it to a worker" paragraph would mislead.
 */
const FIX_IN_PLACE: ReadonlySet<string> = new Set(['intl', 'errors', 'search', 'copy', 'net', 'stream', 'clone']);
/** Labels of work fixed in place although their kind is not (file reads: read less, or once). */
const FIX_IN_PLACE_LABELS: ReadonlySet<string> = new Set([FILE_READS]);

/** What the finding knows beside the work: where it found it, and what it ran on. */
export interface AdviceContext {
  /** JSON.parse run by a dependency with no app code on the stack while the requests carried large bodies. */
  requestBodies?: boolean;
  /** The source of the hot regexp, quoted ahead of the regex advice. */
  pattern?: string;
}

/** Markdown inline code for any text (a pattern may hold backticks). */
function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

export function blockingAdvice(
  work: string | undefined,
  label?: string,
  entry?: EntryKind,
  sequentialCalls = false,
  context: AdviceContext = {},
): string {
  const general =
    'Move the heavy part off the request path: cache its result, do it once at startup, or run it in a ' +
    'worker thread pool (piscina) so the event loop keeps serving other requests. Long synchronous loops can ' +
    'yield with `setImmediate` between chunks of a few milliseconds of work, not between items: each turn of the ' +
    'loop costs more than a small item, and a request that yields per item waits for thousands of turns.';
  const byContext = context.requestBodies
    ? bodyParseAdvice
    : work === 'regex' && context.pattern !== undefined
      ? `The hot pattern is ${code(context.pattern)}. ${byWork.regex}`
      : undefined;
  const specific = byContext ?? (label !== undefined ? byLabel[label] : undefined) ?? (work !== undefined ? byWork[work] : undefined);
  const scheduled = entry !== undefined ? byEntry[entry] : undefined;
  // A nextTick chain or a timer job is already off the request path, or ought to be rescheduled.
  // Calls to another service are no work to move to a worker: the fix is fewer calls, or calls made together.
  if (work === 'http-client')
    return [sequentialCalls ? sequentialCallsAdvice : undefined, scheduled, specific].filter((t) => t !== undefined).join('\n\n');
  const inPlace =
    specific !== undefined && ((work !== undefined && FIX_IN_PLACE.has(work)) || (label !== undefined && FIX_IN_PLACE_LABELS.has(label)));
  return [scheduled, specific, scheduled || inPlace ? undefined : general].filter((t) => t !== undefined).join('\n\n');
}

/** A route table walked per request (dominant-work.ts, ROUTE_TABLE_MIN_PATTERNS). */
export const routeTableAdvice =
  "The router tests each route's pattern in the order they were registered until one matches, so a request pays for every route " +
  'registered before its own: thousands of generated routes (redirects, one route per tenant or per page) cost every request. ' +
  'Register the hot routes first, or replace the generated routes with one parameterized route and a lookup (a Map from the old ' +
  'path or the tenant to its target), or mount them under a prefix router so requests outside the prefix skip them all.';
