// A CPU-bound server for the protect benchmark: every /work request holds the event loop for
// 2 ms of arithmetic, so past its capacity (~500 req/s) requests queue on the event loop.
// Usage: node protect-server.js <port> <plain|protect> [maxEventLoopDelay ms]
// Prints "listening <port>". GET /__stats (exempt) returns served/shed counts and the guard's status;
// GET /hello answers at once (for the guard's cost on a fast route).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { protect, type Protector } from '../../src/protect/index.js';

const SERVICE_MS = Number(process.env.PROTECT_SERVICE_MS ?? 2);

/**
 * ~2 ms of arithmetic, bounded by the clock rather than an iteration count: on a shared machine
 * a fixed count takes anywhere from 2 to 10 ms as other processes take the core, which would
 * move the capacity between measurements; a clock bound keeps the service time (the time the
 * loop is held) at 2 ms, so capacity stays put and the guard's behaviour shows.
 */
function work(): number {
  const end = performance.now() + SERVICE_MS;
  let x = 1;
  let iterations = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) x = (x * 1103515245 + 12345) % 2147483647;
    iterations++;
  }
  return x + iterations;
}

const mode = process.argv[3] ?? 'plain';
const guard: Protector | undefined =
  mode === 'protect' ? protect({ maxEventLoopDelay: Number(process.argv[4] ?? 50), exempt: ['/__stats'] }) : undefined;
let served = 0;

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.url === '/__stats') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ served, status: guard?.status() }));
    return;
  }
  if (req.url === '/hello') {
    res.end('hello');
    return;
  }
  const body = String(work());
  served++;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
  res.end(body);
}

const server = http.createServer(guard ? guard.http(handle) : handle);
// Longer than the benchmark, as behind a balancer: idle keep-alive connections are not closed mid-run.
server.keepAliveTimeout = 120_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
