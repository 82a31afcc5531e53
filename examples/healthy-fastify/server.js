'use strict';
// A healthy control: fastify answering a small JSON document with a response schema.
const fastify = require('fastify')({ logger: false });

fastify.get('/', {
  schema: { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } },
}, async function hello() {
  return { hello: 'world' };
});

fastify.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
