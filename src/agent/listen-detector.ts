// Detects the servers this thread starts listening on (`tracing:net.server.listen:asyncEnd`,
// Node 20+), which is what makes a thread a target, and describes them for `listen`. Not every
// listen does: a launcher's IPC pipe (tsx opens a plain `net` server on a Unix socket to talk to
// its child) and a cluster primary's round-robin handle (it accepts, the workers serve) are
// reported, but the thread is no target for them (isTargetListen).
import * as dc from 'node:diagnostics_channel';
import { isMainThread } from 'node:worker_threads';
import type * as net from 'node:net';
import type { ListenMessage } from './protocol.js';

const LISTEN_CHANNEL = 'tracing:net.server.listen:asyncEnd';

type ListenBody = Omit<ListenMessage, 'v' | 'pid' | 'threadId' | 't'>;

export function onServerListening(cb: (server: net.Server) => void): () => void {
  const handler = (message: unknown): void => {
    try {
      const server = (message as { server?: net.Server } | null)?.server;
      if (server !== undefined && typeof server.address === 'function') cb(server);
    } catch {
      // Subscribers must not throw into the listen call.
    }
  };
  dc.subscribe(LISTEN_CHANNEL, handler);
  return () => dc.unsubscribe(LISTEN_CHANNEL, handler);
}

/**
 * Whether this listen can be the server load is driven at, and so makes the thread worth
 * measuring: any HTTP server, and a plain TCP server (it may hand its connections to an HTTP
 * server); not a plain server on a Unix socket or pipe (an IPC channel: the CLI drives a socket
 * only when it serves HTTP), nor a cluster primary's shared handle (a plain server too).
 */
export function isTargetListen(server: net.Server): boolean {
  if (typeof (server as HttpishServer).keepAliveTimeout === 'number') return true;
  return typeof server.address() !== 'string' && !isClusterPrimaryHandle();
}

interface HttpishServer extends net.Server {
  keepAliveTimeout?: number;
  headersTimeout?: number;
  requestTimeout?: number;
  maxRequestsPerSocket?: number | null;
}

export function describeListen(server: net.Server): ListenBody {
  const addr = server.address();
  const body: ListenBody = { type: 'listen', address: '' };
  if (typeof addr === 'string') {
    body.address = addr;
    body.pipe = addr;
  } else if (addr !== null) {
    body.address = addr.address;
    body.port = addr.port;
    body.family = addr.family;
  }
  if (isClusterPrimaryHandle()) body.clusterPrimary = true;
  const s = server as HttpishServer;
  if (typeof s.keepAliveTimeout === 'number') {
    body.server = {
      kind: isTlsServer(server) ? 'https' : 'http',
      keepAliveTimeout: s.keepAliveTimeout,
      headersTimeout: s.headersTimeout,
      requestTimeout: s.requestTimeout,
    };
    if (typeof s.maxRequestsPerSocket === 'number' && s.maxRequestsPerSocket > 0) body.server.maxRequestsPerSocket = s.maxRequestsPerSocket;
  } else {
    body.server = { kind: 'net' };
  }
  return body;
}

/** In a cluster primary with workers, a listen is the round-robin handle shared with them. */
function isClusterPrimaryHandle(): boolean {
  if (!isMainThread) return false;
  const cluster = require('node:cluster') as typeof import('node:cluster').default;
  return cluster.isPrimary && Object.keys(cluster.workers ?? {}).length > 0;
}

function isTlsServer(server: net.Server): boolean {
  // tls.Server has these methods; loading node:tls just to use instanceof would cost every target.
  const s = server as unknown as Record<string, unknown>;
  return typeof s.addContext === 'function' && typeof s.setSecureContext === 'function';
}
