'use strict';
// A small JSON API behind "a proxy that speaks HTTP/1.0": every request a new connection.
const http = require('node:http');

const server = http.createServer(function status(req, res) {
  const body = JSON.stringify({ ok: true, path: req.url });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});

// Shorter than any load balancer's idle timeout (60 s is common): even proxies that do keep
// connections alive would see Node close them under their feet.
server.keepAliveTimeout = 1000;
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
