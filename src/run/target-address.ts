// Where to drive load, from the agent's `listen` report: a wildcard bind (0.0.0.0, ::) is
// reached over loopback; a Unix socket server is reached through its path; an HTTPS server
// (the agent reports kind 'https' for a TLS server) over https.

import type { ListenMessage } from '../agent/protocol.js';

export interface TargetAddress {
  url: string;
  /** Unix socket path, when the server listens on one. */
  socket?: string;
  /** The server speaks TLS (https.createServer). */
  tls: boolean;
  /** For people: `127.0.0.1:3000` or the socket path. */
  label: string;
}

function hostFor(address: string): string {
  if (address === '' || address === '0.0.0.0' || address === '::' || address === '::ffff:0.0.0.0') return '127.0.0.1';
  return address.includes(':') ? `[${address}]` : address;
}

export function targetAddress(listen: ListenMessage, path: string): TargetAddress {
  const route = path.startsWith('/') ? path : `/${path}`;
  const tls = listen.server?.kind === 'https';
  const scheme = tls ? 'https' : 'http';
  if (listen.pipe !== undefined && listen.port === undefined) {
    return { url: `${scheme}://localhost${route}`, socket: listen.pipe, tls, label: listen.pipe };
  }
  const host = hostFor(listen.address);
  return { url: `${scheme}://${host}:${listen.port}${route}`, tls, label: `${host}:${listen.port}` };
}
