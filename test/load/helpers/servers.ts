// Real servers on 127.0.0.1 (or a Unix socket) for the load tests. Each counts what it
// received, so tests compare the generator's counts with the server's, exactly.

import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  url: string;
  /** Requests the server saw (by request head). */
  requests: number;
  /** Connections it accepted. */
  connections: number;
  /** Request paths in arrival order (raw servers only). */
  paths: string[];
  close(): Promise<void>;
}

/**
 * A raw TCP server: `respond(path, index)` returns the bytes to answer each request with,
 * or `null` to answer nothing; `'close'` closes after writing. Requests have no bodies here.
 */
export function rawServer(
  respond: (path: string, index: number, socket: net.Socket) => string | Buffer | null,
  listenOn?: string,
): Promise<TestServer> {
  const sockets = new Set<net.Socket>();
  const state: TestServer = { url: '', requests: 0, connections: 0, paths: [], close: async () => {} };
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        const length = /content-length:\s*(\d+)/i.exec(head);
        if (length) pending = pending.slice(Number(length[1]));
        const path = head.split(' ')[1] ?? '';
        state.paths.push(path);
        const out = respond(path, state.requests++, socket);
        if (out !== null && !socket.destroyed) socket.write(out);
      }
    });
  });
  return listen(server, state, sockets, listenOn);
}

/** A node:http server; `handler` gets each request; connections and requests are counted. */
export function httpServer(handler: http.RequestListener, listenOn?: string): Promise<TestServer> {
  const sockets = new Set<net.Socket>();
  const state: TestServer = { url: '', requests: 0, connections: 0, paths: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    state.requests++;
    state.paths.push(req.url ?? '');
    handler(req, res);
  });
  server.on('connection', (s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return listen(server, state, sockets, listenOn);
}

function listen(server: net.Server, state: TestServer, sockets: Set<net.Socket>, path?: string): Promise<TestServer> {
  return new Promise((resolve) => {
    const done = () => {
      const port = path === undefined ? (server.address() as AddressInfo).port : 0;
      state.url = path === undefined ? `http://127.0.0.1:${port}/` : 'http://localhost/';
      state.close = () =>
        new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        });
      resolve(state);
    };
    if (path === undefined) server.listen(0, '127.0.0.1', done);
    else server.listen(path, done);
  });
}

export const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
