// A moderately CPU-heavy server for the overhead benchmark: every request serializes a
// ~5 KB object and hashes it with sha256, so the profiler's and agent's cost shows in
// throughput. Usage: node overhead-server.js <port>   (prints "listening <port>")
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const items = Array.from({ length: 60 }, (_, i) => ({
  id: i,
  name: `item-${i}`,
  tags: ['alpha', 'beta', 'gamma'],
  price: i * 1.25,
  stock: i % 7 === 0,
}));

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const body = JSON.stringify({ path: req.url, items });
  const etag = createHash('sha256').update(body).digest('hex');
  res.writeHead(200, { 'content-type': 'application/json', etag, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer(handle);
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
