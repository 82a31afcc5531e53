// Advice for serialization findings (Markdown).

export const serializationAdvice = [
  'Serialize less per request: cache the JSON string of data that rarely changes (and its ETag),',
  'send only the fields the client needs, and avoid stringifying the same object twice',
  '(for logging, hashing, or size checks). A schema-based serializer (fast-json-stringify,',
  'fastify response schemas) is 2-5x faster than JSON.stringify for known shapes.',
].join(' ');

/** When the JSON work is `JSON.parse(JSON.stringify(x))`: a deep copy made per call. */
export const deepCopyAdvice = [
  'The JSON time goes to deep copies (`JSON.parse(JSON.stringify(x))`) made on every call: copy once, not per',
  'request. Share one read-only object (`Object.freeze` it, recursively, if handlers must not change it), copy',
  'only the part a handler changes (`{ ...config.section }`), or keep the copy and rebuild it only when the',
  'source changes. `structuredClone` is no cure: it walks the whole object too.',
].join(' ');

/** When the JSON work is mostly `JSON.parse`. */
export const parseAdvice = [
  'Parse less: the same text parsed more than once per request (per validation rule, per middleware) repeats the',
  'whole work each time: parse once and pass the object along. Bound request body sizes, and cache parsed data',
  'that does not change.',
].join(' ');

/**
 * When the JSON.parse runs with no app code on the stack while the requests carry large bodies: a
 * body parser (express.json, body-parser, fastify's or koa's) parsing them before any handler.
 */
export const bodyParseAdvice = [
  'The time goes to parsing request bodies before any handler runs (express.json / express.urlencoded / body-parser,',
  "fastify's or koa's body parser): parsing costs by the size of the body, and a body of megabytes holds the loop for",
  "tens of milliseconds. Lower the parser's size limit to what the route needs (`express.json({ limit: '100kb' })`,",
  "fastify's `bodyLimit`), so oversized bodies are refused with a 413 before any parsing; have clients send smaller",
  'batches (split uploads, paginate them); mount each parser only on the routes that take its bodies. For urlencoded',
  'forms, `extended: false` (flat keys, no qs) and a lower `parameterLimit` cut the cost of many or nested fields. A',
  'route that must take large documents can accept NDJSON and parse it record by record as a stream, or parse in a',
  'worker thread.',
].join(' ');
