'use strict';
// A REST API returning a product catalog, with an ETag middleware (util.js).
const restify = require('restify');
const { etag } = require('./util.js');

const catalog = Array.from({ length: 60 }, (_, i) => ({
  id: i,
  sku: `SKU-${String(i).padStart(6, '0')}`,
  name: `Product ${i}`,
  price: Math.round(1000 + i * 37.5) / 100,
  tags: ['catalog', `group-${i % 7}`],
}));

const server = restify.createServer({ name: 'catalog' });
server.use(etag(server));

server.get('/', function listProducts(req, res, next) {
  res.payload = catalog;
  res.send(catalog);
  next();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
