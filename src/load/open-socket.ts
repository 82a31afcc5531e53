// Opens a raw socket to the load target: TCP or Unix socket, with or without TLS.

import net from 'node:net';
import tls from 'node:tls';
import type { WorkerTarget } from './worker-protocol.js';

/** Reads straight into a caller's buffer (no Buffer per read, no 'data' events); plain TCP and Unix sockets only. */
export interface OnRead {
  buffer: Buffer;
  /** Return true (false would pause reading). */
  callback(bytes: number, buf: Uint8Array): boolean;
}

export function openSocket(t: WorkerTarget, onread?: OnRead): net.Socket {
  if (t.tls) {
    return tls.connect({
      host: t.host,
      port: t.port,
      path: t.socketPath,
      servername: t.servername,
      rejectUnauthorized: t.rejectUnauthorized,
    });
  }
  return t.socketPath !== undefined
    ? net.connect({ path: t.socketPath, onread })
    : net.connect({ host: t.host, port: t.port as number, onread });
}

/** True when openSocket will honour `onread` for this target. */
export function supportsOnRead(t: WorkerTarget): boolean {
  return !t.tls;
}

/** The event that says the socket is ready for requests. */
export function readyEvent(t: WorkerTarget): 'secureConnect' | 'connect' {
  return t.tls ? 'secureConnect' : 'connect';
}
