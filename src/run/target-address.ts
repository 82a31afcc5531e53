// Where to drive load, from the agent's `listen` report: a wildcard bind (0.0.0.0, ::) is
// reached over loopback; a Unix socket server is reached through its path.

import type { ListenMessage } from '../agent/protocol.js';

export interface TargetAddress {
  url: string;
  /** Unix socket path, when the server listens on one. */
  socket?: string;
  /** For people: `127.0.0.1:3000` or the socket path. */
  label: string;
}

function hostFor(address: string): string {
  if (address === '' || address === '0.0.0.0' || address === '::' || address === '::ffff:0.0.0.0') return '127.0.0.1';
  return address.includes(':') ? `[${address}]` : address;
}

export function targetAddress(listen: ListenMessage, path: string): TargetAddress {
  const route = path.startsWith('/') ? path : `/${path}`;
  if (listen.pipe !== undefined && listen.port === undefined) {
    return { url: `http://localhost${route}`, socket: listen.pipe, label: listen.pipe };
  }
  const host = hostFor(listen.address);
  return { url: `http://${host}:${listen.port}${route}`, label: `${host}:${listen.port}` };
}
