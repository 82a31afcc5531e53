// Setup requests: sent once, in order, on one connection before warm-up and load (for
// example: create the user the scenario then logs in as). Each outcome is reported.

import { openSocket, readyEvent } from './open-socket.js';
import { ResponseScanner, type ScanSink } from './response-scanner.js';
import type { RequestTemplate } from './request-template.js';
import type { WorkerTarget } from './worker-protocol.js';
import type { SetupOutcome } from './load-result.js';

/** Sends each request in turn and waits for its response; never throws. */
export async function sendSetup(target: WorkerTarget, requests: readonly RequestTemplate[], timeoutMs: number): Promise<SetupOutcome[]> {
  const out: SetupOutcome[] = [];
  for (const req of requests) out.push({ method: req.method, path: req.path, ...(await sendOne(target, req, timeoutMs)) });
  return out;
}

function sendOne(target: WorkerTarget, req: RequestTemplate, timeoutMs: number): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: { status?: number; error?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const sink: ScanSink = { onResponse: (status) => finish({ status }), headPending: () => req.head };
    const scanner = new ResponseScanner(sink);
    const socket = openSocket(target);
    const timer = setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
    socket.once(readyEvent(target), () => socket.write(req.bytes));
    socket.on('data', (chunk: Buffer) => {
      if (!scanner.feed(chunk)) finish({ error: 'parse' });
    });
    socket.on('end', () => {
      if (!scanner.end() || !settled) finish({ error: 'EOF' });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish({ error: err.code ?? 'EUNKNOWN' }));
  });
}
