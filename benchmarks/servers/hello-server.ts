// A node:http hello world, the usual target of Node load-generator comparisons.
// Usage: node hello-server.js <port>
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const server = http.createServer((_req, res) => res.end('Hello, World!'));
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
