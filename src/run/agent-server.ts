// The per-run Unix socket the agents connect to. Every process and thread that loads the
// agent opens one connection and sends NDJSON; each message is appended to
// telemetry.ndjson as received, through one write stream (never held in memory), and the
// few that steer the run (hello, listen, profile, bye) are also emitted as events.
// Control messages go the other way, to every connected agent; the driven server (`target`)
// is also sent to every agent that connects later (a cluster worker, a worker-thread server).
//
//   agent (pid, thread) ──NDJSON──▶ AgentServer ──append──▶ telemetry.ndjson
//                      ◀─control──  (broadcast)   ──events──▶ run orchestration

import { EventEmitter, once } from 'node:events';
import { createWriteStream, rmSync, type WriteStream } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PROTOCOL_VERSION, type AgentMessage, type ByeMessage, type ControlMessage, type HelloMessage, type StallMessage,
  type ListenMessage, type ProfileMessage,
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
}

export interface AgentServerEvents {
  hello: [HelloMessage, AgentPeer];
  listen: [ListenMessage, AgentPeer];
  profile: [ProfileMessage, AgentPeer];
  bye: [ByeMessage, AgentPeer];
  disconnect: [AgentPeer];
}

/** sun_path holds ~107 bytes on Linux and 104 on macOS: stay well below. */
const MAX_SOCKET_PATH = 100;

/** A short, unique socket path; falls back to /tmp when TMPDIR is long (macOS). */
export function socketPath(): string {
  const name = `hotpath-${process.pid}-${Math.random().toString(36).slice(2, 8)}.sock`;
  const preferred = join(tmpdir(), name);
  return preferred.length <= MAX_SOCKET_PATH ? preferred : join('/tmp', name);
}

export class AgentServer extends EventEmitter<AgentServerEvents> {
  readonly path: string;
  readonly peers: AgentPeer[] = [];
  /** Lines that were not agent messages, and messages of another protocol version. */
  malformed = 0;
  readonly versions = new Set<unknown>();
  private readonly server: Server;
  private readonly sockets = new Map<Socket, AgentPeer | undefined>();
  private readonly out: WriteStream;
  private readonly paused = new Set<Socket>();
  private closed = false;
  private controlSeq = 0;
  /** The `target` line, once sent: replayed to connections that open later. */
  private targetLine: string | undefined;

  private constructor(telemetryFile: string, path: string) {
    super();
    this.path = path;
    this.out = createWriteStream(telemetryFile, { flags: 'a' });
    this.out.on('error', () => { /* disk full or dir removed: the run goes on; readers see a short file */ });
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Starts listening on a fresh socket path; telemetry is appended to `telemetryFile`. */
  static async start(telemetryFile: string, path = socketPath()): Promise<AgentServer> {
    const s = new AgentServer(telemetryFile, path);
    s.server.listen(path);
    await once(s.server, 'listening');
    return s;
  }

  private accept(socket: Socket): void {
    this.sockets.set(socket, undefined);
    if (this.targetLine !== undefined) socket.write(this.targetLine);
    socket.on('error', () => { /* the process died mid-write: its close follows */ });
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

  private onLine(socket: Socket, line: string): void {
    if (line.trim() === '') return;
    let msg: AgentMessage;
    try {
      msg = JSON.parse(line) as AgentMessage;
    } catch {
      this.malformed++;
      return;
    }
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
      peer = { pid: msg.pid, threadId: msg.threadId, listens: [], profiles: [], closed: false };
      this.sockets.set(socket, peer);
      this.peers.push(peer);
    }
    return peer;
  }

  private dispatch(socket: Socket, msg: AgentMessage): void {
    const peer = this.peerOf(socket, msg);
    switch (msg.type) {
      case 'hello': peer.hello = msg; this.emit('hello', msg, peer); break;
      case 'listen': peer.listens.push(msg); this.emit('listen', msg, peer); break;
      case 'profile': peer.profiles.push(msg); this.emit('profile', msg, peer); break;
      case 'bye': peer.bye = msg; this.emit('bye', msg, peer); break;
      case 'stall': peer.stall = msg; break;
      default: break;
    }
  }

  /** Sends a control message to every connected agent. */
  broadcast(msg: ControlMessage): void {
    this.send(JSON.stringify({ ...msg, seq: ++this.controlSeq }) + '\n');
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
      if (!socket.destroyed && socket.writable) socket.write(line);
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
    rmSync(this.path, { force: true });
    await new Promise<void>((done) => this.out.end(() => done()));
  }
}
