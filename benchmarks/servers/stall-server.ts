// A node:http hello world whose event loop stalls once for 2 s, STALL_AT_MS after its
// first request: the coordinated-omission experiment. Usage: node stall-server.js <port>
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const stallAt = Number(process.env.STALL_AT_MS ?? 1000);
let first = 0;
let stalled = false;
const server = http.createServer((_req, res) => {
  if (first === 0) first = Date.now();
  if (!stalled && Date.now() - first >= stallAt) {
    stalled = true;
    const end = Date.now() + 2000;
    while (Date.now() < end) {
      /* a synchronous 2 s stall, like a blocking call */
    }
  }
  res.end('Hello, World!');
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
