// Which of this thread's servers takes the load. The CLI names the server it drives (control
// `target`: its port, or its Unix socket path) once it chose one; every server of this thread
// that listens elsewhere (a config service or upstream stub the app runs in-process, an admin
// or metrics port) is then marked, and the HTTP collector counts the requests of marked servers
// apart (one property read per request). Until the CLI names one, or with a CLI that never
// does, no server is marked and every request counts, as before.
//
// Marking the others rather than matching the driven one keeps two cases right: an HTTP server
// that never listens but is handed the connections of a plain `net` server on the driven port,
// and a thread (a worker thread, a cluster worker) that serves the driven port without being
// the first to listen on it.
import type * as net from 'node:net';

/** Set to true on a server that listens on another port or path than the driven one. */
export const OTHER_SERVER = Symbol('hotpath.http.otherServer');

export type MarkedServer = net.Server & { [OTHER_SERVER]?: boolean };

export interface DrivenTarget {
  port?: number;
  pipe?: string;
}

/** Servers remembered per thread at most (apps open a handful; tests may open hundreds). */
export const MAX_SERVERS = 64;

export class DrivenServer {
  private target: DrivenTarget | undefined;
  private servers: WeakRef<net.Server>[] = [];

  /** True once the CLI named the driven server: other servers' requests are left out. */
  get known(): boolean {
    return this.target !== undefined;
  }

  /** A server of this thread started listening. */
  onListen(server: net.Server): void {
    this.servers = this.servers.filter((r) => r.deref() !== undefined);
    if (this.servers.length < MAX_SERVERS && !this.servers.some((r) => r.deref() === server)) this.servers.push(new WeakRef(server));
    this.mark(server);
  }

  /** The CLI named the driven server: mark this thread's servers that listen elsewhere. */
  setTarget(target: DrivenTarget): void {
    const port = typeof target.port === 'number' ? target.port : undefined;
    const pipe = typeof target.pipe === 'string' ? target.pipe : undefined;
    if (port === undefined && pipe === undefined) return;
    this.target = { port, pipe };
    for (const ref of this.servers) {
      const server = ref.deref();
      if (server !== undefined) this.mark(server);
    }
  }

  private mark(server: net.Server): void {
    const t = this.target;
    if (t === undefined) return;
    const addr = server.address();
    // A closed server (null) keeps its mark: its requests in flight end as they started.
    if (addr === null) return;
    const driven = typeof addr === 'string' ? t.pipe !== undefined && addr === t.pipe : t.port !== undefined && addr.port === t.port;
    const s = server as MarkedServer;
    if (!driven) s[OTHER_SERVER] = true;
    else if (s[OTHER_SERVER] === true) s[OTHER_SERVER] = false;
  }
}
