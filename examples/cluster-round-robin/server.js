'use strict';
// Two cluster workers behind "a proxy that speaks HTTP/1.0": every request is a new connection,
// and under round-robin scheduling (Node's default on Linux) the primary accepts each one and
// hands it to a worker over IPC. CLUSTER_WORKERS changes the worker count.
const cluster = require('node:cluster');
const http = require('node:http');

const port = Number(process.env.PORT ?? 3000);

function startWorkers(count) {
  for (let i = 0; i < count; i++) cluster.fork();
}

if (cluster.isPrimary) {
  startWorkers(Number(process.env.CLUSTER_WORKERS ?? 2));
} else {
  const server = http.createServer(function status(req, res) {
    const body = JSON.stringify({ ok: true, worker: cluster.worker.id, path: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1');
}
