// The per-run Unix socket the agents connect to. Every process and thread that loads the
// agent opens one connection and sends NDJSON; each message is appended to
// telemetry.ndjson as received, through one write stream (never held in memory), and the
// few that steer the run (hello, listen, profile, bye) are also emitted as events.
// Control messages go the other way, to every connected agent; the driven server (`target`)
// is also sent to every agent that connects later (a cluster worker, a worker-thread server), and
// so is a `profile-start` until its `profile-stop`: a cluster worker forked while the load runs
// (a replacement, or one slower to start) is profiled like the others.
//
// Only this run's agents are heard: the socket is 0600 inside a fresh 0700 directory
// (private-socket.ts), and with a secret every connection must open with an `auth` line
// carrying it (the agents get it in HOTPATH_AGENT_CONFIG). A connection that does not is
// dropped before any of its lines is recorded or any control reaches it, and counted
// (`rejected`, a warning in meta.json). The auth line itself is never written to disk.
//
//   agent (pid, thread) ──NDJSON──▶ AgentServer ──append──▶ telemetry.ndjson
//                      ◀─control──  (broadcast)   ──events──▶ run orchestration

import { timingSafeEqual } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { chmodSync, createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createPrivateSocketPath, removePrivateSocket } from './private-socket.js';
import {
  PROTOCOL_VERSION,
  type AgentMessage,
  type ByeMessage,
  type ControlMessage,
  type HelloMessage,
  type StallMessage,
  type ListenMessage,
  type ProfileMessage,
} from '../agent/protocol.js';

/** One connected agent: a process, or a worker thread of one. */
export interface AgentPeer {
  pid: number;
  threadId: number;
  hello?: HelloMessage;
  listens: ListenMessage[];
  profiles: ProfileMessage[];
  bye?: ByeMessage;
  /** The latest stall report (a stall under way is re-sent until it ends). */
  stall?: StallMessage;
  /** The connection closed (the process exited, or the agent shut down). */
  closed: boolean;
  /**
   * The loop utilization of the thread's latest samples (sender's clock, epoch ms), at most
   * LOOP_READINGS_KEPT, with the interval each covers and the driven server's requests finished in it.
   */
  loop: { t: number; elu: number; intervalMs?: number; finished?: number }[];
  /** When its call-count window opened (epoch ms), once its agent worker said so. */
  callWindowStart?: number;
  /** When its agent worker began to follow the exceptions (epoch ms), once it said so. */
  throwWatchStart?: number;
}

/** Readings of loop utilization kept per thread: a minute of samples at the default 100 ms. */
const LOOP_READINGS_KEPT = 600;

export interface AgentServerEvents {
  hello: [HelloMessage, AgentPeer];
  listen: [ListenMessage, AgentPeer];
  profile: [ProfileMessage, AgentPeer];
  bye: [ByeMessage, AgentPeer];
  disconnect: [AgentPeer];
}

/** A fresh socket path in a new private directory (see private-socket.ts). */
export const socketPath = createPrivateSocketPath;

export class AgentServer extends EventEmitter<AgentServerEvents> {
  readonly path: string;
  readonly peers: AgentPeer[] = [];
  /** Lines that were not agent messages, and messages of another protocol version. */
  malformed = 0;
  readonly versions = new Set<unknown>();
  private readonly server: Server;
  /** Connections that opened without this run's secret, and were dropped. */
  rejected = 0;
  private readonly sockets = new Map<Socket, AgentPeer | undefined>();
  /** Connections that presented the secret (all of them when there is none). */
  private readonly trusted = new WeakSet<Socket>();
  private readonly onExit = () => removePrivateSocket(this.path);
  private readonly out: WriteStream;
  private readonly paused = new Set<Socket>();
  private closed = false;
  private controlSeq = 0;
  /** The `target` line, once sent: replayed to connections that open later. */
  private targetLine: string | undefined;
  /** The `profile-start` line while profiling (until `profile-stop`): replayed to connections that open later. */
  private profileLine: string | undefined;

  private constructor(
    telemetryFile: string,
    path: string,
    private readonly secret: string | undefined,
  ) {
    super();
    this.path = path;
    this.out = createWriteStream(telemetryFile, { flags: 'a', mode: 0o600 });
    this.out.on('error', () => {
      /* disk full or dir removed: the run goes on; readers see a short file */
    });
    this.server = createServer((socket) => this.accept(socket));
  }

  /**
   * Starts listening on a fresh private socket path; telemetry is appended to `telemetryFile`.
   * With `secret`, only connections that open with `{"type":"auth","secret":...}` are heard.
   * The socket (and its directory) is removed on close, and at exit should hotpath die first.
   */
  static async start(telemetryFile: string, path = socketPath(), secret?: string): Promise<AgentServer> {
    const s = new AgentServer(telemetryFile, path, secret);
    // telemetry.ndjson exists (0600) once the server is started, not some time after.
    const opened = once(s.out, 'open');
    s.server.listen(path);
    await Promise.all([once(s.server, 'listening'), opened]);
    // The directory is 0700 already; the socket's own mode would follow the umask.
    chmodSync(path, 0o600);
    process.on('exit', s.onExit);
    return s;
  }

  /** Removes the socket and its private directory now (synchronous: for paths that cannot wait). */
  removeSocket(): void {
    removePrivateSocket(this.path);
  }

  private accept(socket: Socket): void {
    this.sockets.set(socket, undefined);
    if (this.secret === undefined) this.trust(socket);
    socket.on('error', () => {
      /* the process died mid-write: its close follows */
    });
    let pending = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) this.onLine(socket, line);
    });
    socket.on('close', () => {
      if (pending.trim() !== '') this.onLine(socket, pending);
      const peer = this.sockets.get(socket);
      this.sockets.delete(socket);
      if (peer) {
        peer.closed = true;
        this.emit('disconnect', peer);
      }
    });
  }

  private trust(socket: Socket): void {
    this.trusted.add(socket);
    if (this.targetLine !== undefined) socket.write(this.targetLine);
    if (this.profileLine !== undefined) socket.write(this.profileLine);
  }

  /** The first line of a connection, when a secret is required: the auth line, or the connection is dropped. */
  private authenticate(socket: Socket, line: string): void {
    let secret: unknown;
    try {
      const msg = JSON.parse(line) as { type?: unknown; secret?: unknown };
      if (msg.type === 'auth') secret = msg.secret;
    } catch {
      /* not even JSON: rejected below */
    }
    const expected = Buffer.from(this.secret as string);
    const given = Buffer.from(typeof secret === 'string' ? secret : '');
    if (given.length === expected.length && timingSafeEqual(given, expected)) {
      this.trust(socket);
      return;
    }
    this.rejected++;
    this.sockets.delete(socket);
    socket.destroy();
  }

  private onLine(socket: Socket, line: string): void {
    if (line.trim() === '' || !this.sockets.has(socket)) return;
    if (!this.trusted.has(socket)) return this.authenticate(socket, line);
    let msg: AgentMessage;
    try {
      msg = JSON.parse(line) as AgentMessage;
    } catch {
      this.malformed++;
      return;
    }
    // An agent given a secret opens with it; a server without one has nothing to check.
    if ((msg as { type?: unknown }).type === 'auth') return;
    if (typeof msg !== 'object' || msg === null || typeof msg.type !== 'string' || typeof msg.pid !== 'number') {
      this.malformed++;
      return;
    }
    if (msg.v !== PROTOCOL_VERSION) this.versions.add(msg.v);
    if (this.out.writableEnded) return;
    if (!this.out.write(line + '\n')) this.throttle(socket);
    this.dispatch(socket, msg);
  }

  /** Backpressure: stop reading this agent until the file catches up, instead of buffering. */
  private throttle(socket: Socket): void {
    if (this.paused.size === 0) {
      this.out.once('drain', () => {
        for (const s of this.paused) s.resume();
        this.paused.clear();
      });
    }
    this.paused.add(socket);
    socket.pause();
  }

  private peerOf(socket: Socket, msg: AgentMessage): AgentPeer {
    let peer = this.sockets.get(socket);
    if (!peer) {
      peer = { pid: msg.pid, threadId: msg.threadId, listens: [], profiles: [], closed: false, loop: [] };
      this.sockets.set(socket, peer);
      this.peers.push(peer);
    }
    return peer;
  }

  private dispatch(socket: Socket, msg: AgentMessage): void {
    const peer = this.peerOf(socket, msg);
    switch (msg.type) {
      case 'hello':
        peer.hello = msg;
        this.emit('hello', msg, peer);
        break;
      case 'listen':
        peer.listens.push(msg);
        this.emit('listen', msg, peer);
        break;
      case 'profile':
        peer.profiles.push(msg);
        this.emit('profile', msg, peer);
        break;
      case 'bye':
        peer.bye = msg;
        this.emit('bye', msg, peer);
        break;
      case 'stall':
        peer.stall = msg;
        break;
      case 'call-window':
        if (typeof msg.start === 'number') peer.callWindowStart = msg.start;
        break;
      case 'throw-watch':
        if (typeof msg.start === 'number') peer.throwWatchStart = msg.start;
        break;
      case 'sample':
        if (typeof msg.elu === 'number' && typeof msg.t === 'number') {
          peer.loop.push({
            t: msg.t,
            elu: msg.elu,
            ...(typeof msg.intervalMs === 'number' ? { intervalMs: msg.intervalMs } : {}),
            ...(typeof msg.http?.finished === 'number' ? { finished: msg.http.finished } : {}),
          });
          if (peer.loop.length > LOOP_READINGS_KEPT) peer.loop.shift();
        }
        break;
      default:
        break;
    }
  }

  /** Sends a control message to every connected agent. */
  broadcast(msg: ControlMessage): void {
    const line = JSON.stringify({ ...msg, seq: ++this.controlSeq }) + '\n';
    if (msg.cmd === 'profile-start') this.profileLine = line;
    else if (msg.cmd === 'profile-stop') this.profileLine = undefined;
    this.send(line);
  }

  /**
   * Names the server the load goes to (its port, or its Unix socket path), to every agent
   * connected now and every one that connects later: each leaves its other servers' requests
   * out of its HTTP figures.
   */
  setTarget(target: { port?: number; pipe?: string }): void {
    const msg: ControlMessage = { v: PROTOCOL_VERSION, type: 'control', cmd: 'target', ...target };
    this.targetLine = JSON.stringify({ ...msg, seq: ++this.controlSeq }) + '\n';
    this.send(this.targetLine);
  }

  private send(line: string): void {
    for (const socket of this.sockets.keys()) {
      if (!socket.destroyed && socket.writable && this.trusted.has(socket)) socket.write(line);
    }
  }

  /** Agents still connected. */
  connected(): AgentPeer[] {
    return this.peers.filter((p) => !p.closed);
  }

  /**
   * Stops accepting agents, closes the connections still open, and waits until every
   * received line is on disk. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const socket of this.sockets.keys()) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
    removePrivateSocket(this.path);
    process.off('exit', this.onExit);
    await new Promise<void>((done) => this.out.end(() => done()));
  }
}
