// Advice for event-loop-blocking findings, by the kind of work that blocks (Markdown).

const byWork: Record<string, string> = {
  crypto: 'Hashing and key derivation are CPU work: use the async crypto APIs (they run on the libuv thread pool), ' +
    'hash less data (a cheap key instead of a content hash), or cache the result.',
  json: 'Serialize less: cache the serialized string of data that does not change, trim the payload, or use a ' +
    'schema-based serializer (fast-json-stringify, fastify response schemas).',
  regex: 'A regular expression dominates: check it for catastrophic backtracking (nested quantifiers), anchor it, ' +
    'bound the input length, or replace it with plain string operations.',
  zlib: 'Compression runs synchronously here: use the async zlib API or streams, lower the level, or compress ' +
    'once and cache static responses.',
  fs: 'File-system calls block the loop: read at startup and cache, or use fs.promises.',
  buffer: 'Buffer/string conversions dominate: avoid converting large payloads back and forth per request.',
};

export function blockingAdvice(work: string | undefined): string {
  const general = 'Move the heavy part off the request path: cache its result, do it once at startup, or run it in a ' +
    'worker thread pool (piscina) so the event loop keeps serving other requests. Long synchronous loops can ' +
    'yield with `setImmediate` between chunks.';
  return work && byWork[work] ? `${byWork[work]}\n\n${general}` : general;
}
