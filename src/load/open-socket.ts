// Opens a raw socket to the load target: TCP or Unix socket, with or without TLS.

import net from 'node:net';
import tls from 'node:tls';
import type { WorkerTarget } from './worker-protocol.js';

export function openSocket(t: WorkerTarget): net.Socket {
  if (t.tls) {
    return tls.connect({ host: t.host, port: t.port, path: t.socketPath, servername: t.servername, rejectUnauthorized: t.rejectUnauthorized });
  }
  return t.socketPath !== undefined ? net.connect({ path: t.socketPath }) : net.connect({ host: t.host, port: t.port as number });
}

/** The event that says the socket is ready for requests. */
export function readyEvent(t: WorkerTarget): 'secureConnect' | 'connect' {
  return t.tls ? 'secureConnect' : 'connect';
}
