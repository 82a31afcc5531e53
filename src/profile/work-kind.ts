// What kind of work a frame does, from its name and file: hashing, JSON, regex, zlib, fs,
// buffers... Used to say what a function's attributed time was spent on ("75% of this
// handler's time is SHA-512 hashing and JSON serialization"). Names measured on Node 20/22/24:
// crypto work appears as node:internal/crypto/* frames (pbkdf2Sync, update, randomFillSync),
// zlib as node:zlib frames (processChunkSync), regexps as "RegExp: <source>" frames, buffer
// encoding as natives (base64Slice, utf8Write) under node:buffer; JSON.stringify/parse run
// inline with no frame at all (see inlineWorkOfLine); fetch as node:internal/deps/undici frames
// under a `fetch` frame of node:internal/bootstrap, http.request as node:_http_client.

import type { Frame, WorkKind } from './call-tree.js';

export interface WorkLabel {
  work: WorkKind;
  /** Human label, e.g. "PBKDF2 key derivation", "hashing", "JSON.stringify". */
  label: string;
}

const cryptoLabels: [RegExp, string][] = [
  [/pbkdf2/i, 'PBKDF2 key derivation'],
  [/scrypt/i, 'scrypt key derivation'],
  [/hkdf/i, 'HKDF key derivation'],
  [/random|uuid/i, 'random bytes'],
  [/sign|verify/i, 'signing/verification'],
  [/cipher|decipher|final/i, 'encryption'],
  [/diffie|ecdh|generateKey/i, 'key exchange/generation'],
];

function cryptoLabel(name: string, file: string): string {
  if (/crypto\/hash|hmac/.test(file) || /^(update|digest|Hash|Hmac|hash)$/.test(name)) return 'hashing';
  for (const [re, label] of cryptoLabels) if (re.test(name) || re.test(file)) return label;
  return 'crypto';
}

/** The label of the outgoing HTTP client's work: fetch (undici, bundled in Node) and node:http requests. */
export const HTTP_CLIENT = 'HTTP client calls';

/** The label of starting child processes (spawn, exec, execFile, fork and the pipes they open). */
export const CHILD_PROCESS = 'spawning child processes';

/**
 * The label of IPC with the parent or child process (process.send, the cluster's messages). In a
 * cluster worker under round-robin scheduling every new connection arrives this way, and the
 * socket's setup runs under these frames: not the cost of spawning anything (issue 24).
 */
export const IPC_LABEL = 'IPC messages (process.send, cluster connection hand-offs)';

/** node:internal/child_process functions of the IPC channel (the rest of the file spawns processes). */
const ipcFunction = /^(channel\.\w+|target\.\w+|handleMessage|emit|got|setupChannel)$/;
const isIpcFrame = (name: string, file: string): boolean =>
  file.startsWith('node:internal/cluster/') ||
  file === 'node:internal/child_process/serialization' ||
  (file === 'node:internal/child_process' && ipcFunction.test(name));

/**
 * The label of async zlib's work on the loop (zlib.gzip, createGzip streams: their stream, the
 * native handle and the hand-off of each chunk to the thread pool, where the compression runs).
 * Every compressed response pays it, like issuing I/O (focused-work.ts's ISSUING_IO_WORK): a healthy
 * Fastify API gzipping a 9 KB page per request asynchronously at 12,000 req/s showed 25 % of its
 * samples there (round w), most of them in the handle's `write`, the hand-off, on a machine whose
 * two cores the pool's threads were compressing on. The synchronous API (`syncBufferWrapper` →
 * `zlibBufferSync` → `processChunkSync`, ZLIB_SYNC) compresses on the loop: 'zlib' work, and the
 * async-looking frames it runs (the `Gzip` it builds) are its own (work-breakdown.ts).
 */
export const ZLIB_ASYNC = 'async zlib (streams and hand-offs to the thread pool)';
const zlibSync = /Sync$|^syncBufferWrapper$/;

/** The label of structured-clone work: messages to and from worker threads (see cloneCall). */
export const CLONE_LABEL = 'structured clone of worker messages';

/**
 * The label of Node mapping a stack trace through the app's source maps (`--enable-source-maps`,
 * node:internal/source_map): every read of an Error's `.stack` maps each frame. A logger taking its
 * call site from `new Error().stack` on each line (tsc output run with the flag) spent 65 % of that
 * function's time there and 18 % capturing the stacks (round w); without the flag the same calls
 * cost a quarter as much (2.9 against 0.73 ms for 60 lines).
 */
export const SOURCE_MAPPED_STACKS = 'stack traces mapped through source maps';

/** Node core modules by file, in order of precedence. */
const coreWork: [RegExp, WorkKind, string][] = [
  [/^node:internal\/source_map\//, 'errors', SOURCE_MAPPED_STACKS],
  [/^node:internal\/deps\/undici|^node:_http_(client|agent)$/, 'http-client', HTTP_CLIENT],
  [/^node:(internal\/)?child_process/, 'child-process', CHILD_PROCESS],
  // Worker#postMessage serializes its message in node:internal/worker; a message arriving from a
  // worker thread or a MessagePort is deserialized under node:internal/per_context/messageport.
  [/^node:internal\/per_context\/messageport$/, 'clone', CLONE_LABEL],
  [/^node:internal\/util\/inspect/, 'inspect', 'util.inspect object formatting'],
  [/^node:(internal\/)?vm/, 'vm', 'vm contexts and scripts'],
  [/^node:(internal\/)?(fs|fs\/)/, 'fs', 'file system'],
  [/^node:(internal\/)?buffer|^node:internal\/encoding|^node:string_decoder/, 'buffer', 'buffer/string encoding'],
  [/^node:(_http_|internal\/http|http)/, 'http', 'HTTP'],
  [/^node:(net|internal\/net|internal\/stream_base_commons|tls|_tls)/, 'net', 'sockets'],
  [/^node:(internal\/)?(streams?|stream)/, 'stream', 'streams'],
  [/^node:events/, 'events', 'events'],
  [/^node:(internal\/)?timers/, 'timers', 'timers'],
  [/^node:internal\/modules|^node:internal\/bootstrap/, 'module-loading', 'module loading'],
];

/**
 * Work an outgoing HTTP client does through Node's plumbing: the sockets, streams, events,
 * timers, parsers and encoding under a fetch or http.request frame are the client's cost per call.
 * The same holds for a child process: the stdio pipes and streams spawn opens are its cost.
 */
export const HTTP_CLIENT_PLUMBING: ReadonlySet<WorkKind> = new Set(['net', 'stream', 'events', 'timers', 'http', 'module-loading']);

/** Work kinds whose frames' plumbing (HTTP_CLIENT_PLUMBING) below them is their own cost (async zlib's Transform stream too). */
export const PLUMBING_OWNERS: ReadonlySet<WorkKind> = new Set(['http-client', 'child-process', 'zlib-async']);

/**
 * Whole files read into memory through `fs.promises.readFile` (and FileHandle.readFile): Node
 * reads them in chunks from the event loop (the native `read` under readFileHandle) into one
 * buffer the size of the file. The callback `fs.readFile` reads on the thread pool and shows
 * almost nothing on the loop; the *Sync calls are plain 'file system'.
 */
export const FILE_READS = 'whole-file reads (fs.promises.readFile)';
const fileReads = (name: string, file: string) => file === 'node:internal/fs/promises' && /^readFile/.test(name);

/** Buffer work that copies bytes or allocates memory (Buffer.concat, alloc), not encoding. */
export const BUFFER_COPIES = 'buffer copies and allocation';
const bufferCopy = /^(concat|_copy|_copyActual|copy|alloc|allocUnsafe|allocUnsafeSlow|allocate|createUnsafeBuffer|createPool|FastBuffer)$/;

const nativeBuffer =
  /^(base64|base64url|hex|latin1|ascii|ucs2|utf8)(Slice|Write)$|^(byteLengthUtf8|encodeUtf8String|encodeInto|compare|indexOf\w*)$/;

/**
 * The label of the native socket write path (perf's native stacks: `hotpath run --native`, import):
 * node's StreamBase writes (per chunk: the string converted, the iovec built), libuv's write and
 * the kernel's send system calls under them.
 */
export const SOCKET_WRITE_PATH = 'socket writes (node C++, libuv, kernel)';

/**
 * Native frames as perf names them (`hotpath run --native`, `hotpath import`): C, C++ and kernel
 * symbols of the work under a binding the inspector shows as one frame or none. The first match
 * wins; a frame without one inherits its caller's work.
 */
const nativeWork: [RegExp, WorkKind, string][] = [
  // Writing to a socket: node's StreamBase (a writev of many small chunks converts each one), libuv,
  // and the kernel's sendmsg/write on a TCP or Unix socket (on loopback, the delivery to the peer behind it).
  [
    /^node::StreamBase::(Writev|Write\w*)\b|^node::StreamBase::JSMethod<&node::StreamBase::Write|^node::LibuvStreamWrap::Do(Try)?Write|^uv_try_write$|^uv__write$|^uv_write2?$/,
    'net',
    SOCKET_WRITE_PATH,
  ],
  [
    /^(sock_sendmsg|sock_write_iter|__sys_sendto|__sys_sendmsg|tcp_sendmsg\w*|unix_stream_sendmsg|__tcp_push_pending_frames|tcp_write_xmit)\b.*\[kernel\]$/,
    'net',
    SOCKET_WRITE_PATH,
  ],
  [/^(sock_recvmsg|sock_read_iter|tcp_recvmsg\w*|unix_stream_recvmsg)\b.*\[kernel\]$/, 'net', 'kernel socket reads (system calls)'],
  [
    /^v8::internal::(ScavengerCollector|Scavenger|ScavengeJob)\b|^v8::internal::MinorM\w+/,
    'gc',
    'garbage collection (scavenge: young generation)',
  ],
  [
    /^v8::internal::(MarkCompactCollector|FullMarkingVerifier|MarkingVisitor\w*|MainMarkingVisitor)\b/,
    'gc',
    'garbage collection (mark-compact: old generation)',
  ],
  [/^v8::internal::(IncrementalMarking|ConcurrentMarking)\b/, 'gc', 'garbage collection (incremental marking)'],
  [/^v8::internal::(Sweeper|ArrayBufferSweeper)\b/, 'gc', 'garbage collection (sweeping)'],
  [
    /^v8::internal::Heap::(CollectGarbage|PerformGarbageCollection|CollectAllGarbage)|^v8::internal::GCTracer\b/,
    'gc',
    'garbage collection',
  ],
  [/^v8::internal::JsonParser|^Builtins_JsonParse|^v8::internal::Builtin_JsonParse/, 'json', 'JSON.parse'],
  [/^v8::internal::JsonStringifier|^Builtins_JsonStringify|^v8::internal::Builtin_JsonStringify/, 'json', 'JSON.stringify'],
  [
    /ZlibContext|BrotliEncoder|BrotliDecoder|^(deflate\w*|inflate\w*|longest_match|fill_window|compress_block|send_tree|build_tree|pqdownheap|_tr_\w+|crc32\w*|adler32\w*|updatewindow|Cr_z_\w+|BrotliEncoderCompress\w*|BrotliDecoderDecompress\w*)$/,
    'zlib',
    'zlib compression',
  ],
  [/PKCS5_PBKDF2|pbkdf2/i, 'crypto', 'PBKDF2 key derivation'],
  [/scrypt/i, 'crypto', 'scrypt key derivation'],
  [/^(sha\d+_block\w*|SHA\d+\w*|HMAC\w*|md5_block\w*|MD5\w*|EVP_Digest\w*|KECCAK\w*|blake2\w*)$|node::crypto::Hash/, 'crypto', 'hashing'],
  [/^(aesni_\w+|AES_\w+|ChaCha20\w*|Poly1305\w*|gcm_\w+|EVP_(En|De)crypt\w*|EVP_Cipher\w*)$|node::crypto::Cipher/, 'crypto', 'encryption'],
  [
    /^(EVP_\w+|ossl_\w+|OPENSSL_\w+|BN_\w+|bn_\w+|EC_\w+|ecp_nistz256\w*|RSA_\w+|x25519\w*|RAND_\w+|CRYPTO_\w+|SSL_\w+|tls\d*_\w+)$|^node::crypto::/,
    'crypto',
    'crypto',
  ],
];

/** The specific work a frame shows, or undefined when its name and file say nothing specific. */
export function specificWork(frame: Frame): WorkLabel | undefined {
  const { name, file, kind } = frame;
  if (kind === 'gc') return { work: 'gc', label: 'garbage collection' };
  if (kind === 'idle') return { work: 'idle', label: 'idle' };
  if (kind === 'program') return { work: 'program', label: 'V8/native (unattributed)' };
  if (name.startsWith('RegExp: ')) return { work: 'regex', label: 'regular expressions' };
  if (/^JSON\.(stringify|parse)$/.test(name)) return { work: 'json', label: name };
  if (file.startsWith('node:internal/crypto') || file === 'node:crypto') return { work: 'crypto', label: cryptoLabel(name, file) };
  if (kind === 'node-core') {
    if (/^node:(internal\/)?buffer/.test(file) && bufferCopy.test(name)) return { work: 'buffer', label: BUFFER_COPIES };
    // The global fetch (defined at bootstrap, it loads undici on first use) and http.request/get.
    if ((name === 'fetch' && file.startsWith('node:internal/bootstrap')) || (/^node:https?$/.test(file) && /^(request|get)$/.test(name))) {
      return { work: 'http-client', label: HTTP_CLIENT };
    }
    if (fileReads(name, file)) return { work: 'fs', label: FILE_READS };
    if (name === 'postMessage' && file === 'node:internal/worker') return { work: 'clone', label: CLONE_LABEL };
    if (isIpcFrame(name, file)) return { work: 'ipc', label: IPC_LABEL };
    if (/^node:(internal\/)?zlib/.test(file))
      return zlibSync.test(name) ? { work: 'zlib', label: 'zlib compression' } : { work: 'zlib-async', label: ZLIB_ASYNC };
    for (const [re, work, label] of coreWork) if (re.test(file)) return { work, label };
  }
  if (kind === 'native' && /^(copy|fill)$/.test(name)) return { work: 'buffer', label: BUFFER_COPIES };
  if (kind === 'native' && nativeBuffer.test(name)) return { work: 'buffer', label: 'buffer/string encoding' };
  if (kind === 'native' || kind === 'kernel') for (const [re, work, label] of nativeWork) if (re.test(name)) return { work, label };
  return undefined;
}

/** The work of a frame when nothing more specific is known: its class. */
export function genericWork(frame: Frame): WorkLabel {
  switch (frame.kind) {
    case 'app':
      return { work: 'app', label: 'own code' };
    case 'deps':
      return { work: 'deps', label: dependencyName(frame.file) };
    case 'node-core':
      return { work: 'node-core', label: 'Node.js core' };
    case 'kernel':
      return { work: 'kernel', label: 'kernel' };
    default:
      return { work: 'native', label: 'native/V8' };
  }
}

/** `node_modules/@scope/pkg/...` → "@scope/pkg"; the package a dependency frame belongs to. */
export function dependencyName(file: string): string {
  const i = file.lastIndexOf('node_modules/');
  if (i < 0) return 'dependencies';
  const parts = file.slice(i + 'node_modules/'.length).split('/');
  return parts[0].startsWith('@') && parts.length > 1 ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The label of `JSON.parse(JSON.stringify(x))` on one line: a deep copy, not serialization for output. */
export const JSON_DEEP_COPY = 'JSON deep copy';
const jsonDeepCopy = /JSON\.parse\(\s*JSON\.stringify\(/;

/** RegExp methods, and String methods when the line also holds a regexp literal or constructor. */
const regexCall = /\.(test|exec)\(/;
const stringRegexCall = /\.(match|matchAll|replace|replaceAll|split|search)\(/;
const regexLiteral = /(^|[=(,:!&|?{};]|return)\s*\/(?![/*])(\\.|[^/\\\n])+\/[dgimsuvy]*/;

/** Work found on a source line, with where its call starts (for otherCallsOnLine). */
export interface LineWork extends WorkLabel {
  /** Index in the line of the work's call (`JSON.stringify`, `.test(`...). */
  at: number;
}

/** Locale formatting: Intl constructors and the toLocale* / localeCompare shortcuts that build one per call. */
const intlCall = /\bnew\s+Intl\.\w+|\bIntl\.\w+\(|\.toLocale(?:String|DateString|TimeString)\(|\.localeCompare\(/;
/** An Error built (its stack trace captured): `new ValidationError(`, `Error.captureStackTrace(`. */
const errorCall = /\bnew\s+(?:[\w$]+\.)*[\w$]*Error\s*\(|\bError\.captureStackTrace\(/;
/** A spread that copies into a new object or array literal: `{ ...acc, [k]: v }`, `[...list, x]`. */
const spreadCopy = /[{[]\s*\.\.\.\s*[\w$([]/;
/** Array lookups that scan until they find (the callback's or the builtin's time is the line's). */
const linearSearch = /\.(some|find|findIndex|findLast|findLastIndex|includes|indexOf|lastIndexOf)\(/;

/**
 * Code compiled at run time: `new Function(`/`Function(` (async and generator kinds too), a direct
 * or indirect `eval(`, and vm's compilers (`new vm.Script(`, `vm.compileFunction(`). A method of
 * the same name (`redis.eval(`, `x.Function(`) is not.
 */
const compileCall =
  /(?<![\w$.])(?:new\s+)?(?:Async|AsyncGenerator|Generator)?Function\s*\(|(?<![\w$.])eval\s*\(|\bnew\s+vm\.Script\s*\(|\bvm\.compileFunction\s*\(/;

export const COMPILE_LABEL = 'compiling code';

/**
 * Messages copied with the structured clone algorithm: `postMessage(` to a worker thread or a
 * MessagePort, `structuredClone(`, `v8.serialize(`/`deserialize(`. V8 serializes the whole graph
 * in native code, charged to the calling line; the receiving side deserializes it under
 * node:internal/per_context/messageport.
 */
const cloneCall = /\.postMessage\s*\(|(?<![\w$.])structuredClone\s*\(|\bv8\.(?:de)?serialize\s*\(/;
export const INTL_LABEL = 'Intl locale formatting';
export const ERRORS_LABEL = 'creating Error objects (stack traces)';
export const SEARCH_LABEL = 'linear array searches';
export const COPY_LABEL = 'spread copies';

/**
 * Work V8 runs without a frame of its own, recognised on the calling source line:
 * JSON.stringify/parse are never framed; a regexp runs in V8's bytecode interpreter (no
 * "RegExp:" frame) until it tiers up to native code; `new Function`/`eval` compile in V8's
 * parser and compiler, charged to the calling line; Intl formatters, Error construction (the
 * stack capture), spread copies and array lookups run in builtins that never show a frame.
 * `fn` is the name of the function the line is in: the `super(...)` of an Error subclass's
 * constructor is where its stack trace is captured.
 */
export function inlineWorkOfLine(text: string, fn?: string): LineWork | undefined {
  const copy = jsonDeepCopy.exec(text);
  if (copy) return { work: 'json', label: JSON_DEEP_COPY, at: copy.index };
  // Compiling the code costs far more than the JSON a template may inline into it.
  const compile = compileCall.exec(text);
  if (compile) return { work: 'compile', label: COMPILE_LABEL, at: compile.index };
  for (const label of ['JSON.stringify', 'JSON.parse']) {
    const at = text.indexOf(label);
    if (at >= 0) return { work: 'json', label, at };
  }
  const clone = cloneCall.exec(text);
  if (clone) return { work: 'clone', label: CLONE_LABEL, at: clone.index };
  // `.test(`/`.exec(` are regexp calls; `.match(`, `.replace(`... only when the line holds a regexp.
  const call = regexCall.exec(text);
  if (call) return { work: 'regex', label: 'regular expressions', at: call.index };
  const stringCall = stringRegexCall.exec(text);
  if (stringCall && (regexLiteral.test(text) || text.includes('RegExp(')))
    return { work: 'regex', label: 'regular expressions', at: stringCall.index };
  const intl = intlCall.exec(text);
  if (intl) return { work: 'intl', label: INTL_LABEL, at: intl.index };
  const error = errorCall.exec(text) ?? (fn !== undefined && /Error$/.test(fn) ? /\bsuper\s*\(/.exec(text) : null);
  if (error) return { work: 'errors', label: ERRORS_LABEL, at: error.index };
  const spread = spreadCopy.exec(text);
  if (spread) return { work: 'copy', label: COPY_LABEL, at: spread.index };
  const search = linearSearch.exec(text);
  if (search) return { work: 'search', label: SEARCH_LABEL, at: search.index };
  return undefined;
}
