'use strict';
// A healthy control: node:http answering a small JSON document.
const http = require('node:http');

http.createServer(function hello(req, res) {
  const body = JSON.stringify({ hello: 'world' });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
