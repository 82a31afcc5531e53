// Advice for serialization findings (Markdown).

export const serializationAdvice = [
  'Serialize less per request: cache the JSON string of data that rarely changes (and its ETag),',
  'send only the fields the client needs, and avoid stringifying the same object twice',
  '(for logging, hashing, or size checks). A schema-based serializer (fast-json-stringify,',
  'fastify response schemas) is 2-5x faster than JSON.stringify for known shapes.',
].join(' ');
