// One NDJSON connection to the hotpath CLI over the run's Unix socket: an unref'd socket,
// a bounded write buffer (messages are dropped and counted when the CLI reads too slowly),
// and control messages parsed line by line. Never throws; a dead socket drops silently.
import * as net from 'node:net';
import { PROTOCOL_VERSION, type AgentMessage, type AuthMessage, type ControlMessage } from './protocol.js';
import { epochNow } from './clock.js';
import { listen } from './originals.js';

/** Beyond this many bytes waiting in the socket, new messages are dropped (bounded memory). */
export const MAX_PENDING_BYTES = 4 * 1024 * 1024;
/** A control line longer than this is garbage; the buffer is discarded. */
const MAX_LINE = 64 * 1024;

let connectionSecret: string | undefined;

/**
 * This thread's copy of the run's secret (AgentConfig.secret): every connection opened from
 * now on sends it first (the CLI drops a connection that does not). Set once per thread, by
 * start-agent in an agent'd thread and by the agent worker from its workerData.
 */
export function useConnectionSecret(secret: string | undefined): void {
  connectionSecret = secret;
}

type Body<M> = M extends AgentMessage ? Omit<M, 'v' | 'pid' | 'threadId' | 't'> : never;
export type OutgoingMessage = Body<AgentMessage>;

export class AgentConnection {
  dropped = 0;
  private readonly socket: net.Socket | undefined;
  private closed = false;
  private partial = '';
  /** Lines held for one write (hold/release), and the callbacks waiting for them to leave. */
  private held: string | undefined;
  private heldCount = 0;
  private heldDone: (() => void)[] = [];
  private controlHandler: ((msg: ControlMessage) => void) | undefined;

  /** `threadId` is the thread the messages describe (a helper worker reports for its main thread). */
  constructor(
    path: string,
    private readonly threadId: number,
    ref = false,
    onConnect?: () => void,
  ) {
    try {
      this.socket = net.createConnection(path);
      if (connectionSecret !== undefined) {
        const auth: AuthMessage = { v: PROTOCOL_VERSION, type: 'auth', pid: process.pid, threadId, secret: connectionSecret };
        // Queued before the connection opens: the first bytes the CLI reads.
        this.socket.write(JSON.stringify(auth) + '\n');
      }
      if (onConnect !== undefined) listen(this.socket, 'connect', onConnect);
      if (!ref) this.socket.unref();
      this.socket.setEncoding('utf8');
      listen(this.socket, 'error', () => this.markClosed());
      listen(this.socket, 'close', () => this.markClosed());
      listen(this.socket, 'data', (chunk: string) => this.onData(chunk));
      // listen() bypasses Readable#on, which is what would switch the stream to flowing mode.
      this.socket.resume();
    } catch {
      this.closed = true;
    }
  }

  onControl(handler: (msg: ControlMessage) => void): void {
    this.controlHandler = handler;
  }

  /** Sends one message; returns false when it was dropped. `done` runs once the bytes left the process. */
  send(body: OutgoingMessage, done?: () => void): boolean {
    const s = this.socket;
    if (this.closed || s === undefined || s.destroyed) return this.drop();
    if (s.writableLength > MAX_PENDING_BYTES) return this.drop();
    let line: string;
    try {
      line = JSON.stringify({ v: PROTOCOL_VERSION, pid: process.pid, threadId: this.threadId, t: epochNow(), ...body }) + '\n';
    } catch {
      return this.drop();
    }
    if (this.held !== undefined) {
      this.held += line;
      this.heldCount++;
      if (done !== undefined) this.heldDone.push(done);
      return true;
    }
    s.write(line, done === undefined ? undefined : () => done());
    return true;
  }

  /**
   * Messages sent from now until release() leave in one write: each write is a syscall on the
   * target's thread and wakes the reader (the CLI), and one timer fire can send several (the
   * GCs, the sample, the growth report). Nothing is delayed past the release.
   */
  hold(): void {
    if (this.held === undefined) this.held = '';
  }

  /** Writes what was held since hold(), at once. */
  release(): void {
    const lines = this.held;
    if (lines === undefined) return;
    const count = this.heldCount;
    this.held = undefined;
    this.heldCount = 0;
    const done = this.heldDone;
    if (done.length > 0) this.heldDone = [];
    const after = done.length === 0 ? undefined : (): void => done.forEach((d) => d());
    if (lines === '' && after === undefined) return;
    const s = this.socket;
    // Closed meanwhile: the held messages are lost as single sends would have been.
    if (this.closed || s === undefined || s.destroyed) {
      this.dropped += count;
      after?.();
      return;
    }
    s.write(lines, after);
  }

  /** Calls `done` once everything sent so far has left the process (or at once when closed). */
  afterWrites(done: () => void): void {
    const s = this.socket;
    if (this.closed || s === undefined || s.destroyed) return done();
    if (this.held !== undefined) return void this.heldDone.push(done);
    s.write('', () => done());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Ends the connection after pending writes. */
  end(): void {
    if (this.closed || this.socket === undefined) return;
    this.closed = true;
    this.socket.end();
  }

  private drop(): false {
    this.dropped++;
    return false;
  }

  private markClosed(): void {
    this.closed = true;
  }

  private onData(chunk: string): void {
    this.partial += chunk;
    if (this.partial.length > MAX_LINE && !this.partial.includes('\n')) this.partial = '';
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) !== -1) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      this.dispatch(line);
    }
  }

  private dispatch(line: string): void {
    if (line.trim() === '' || this.controlHandler === undefined) return;
    try {
      const msg: unknown = JSON.parse(line);
      if (isControl(msg)) this.controlHandler(msg);
    } catch {
      // A malformed control line is ignored: the CLI is the only writer and will time out.
    }
  }
}

function isControl(msg: unknown): msg is ControlMessage {
  return (
    typeof msg === 'object' &&
    msg !== null &&
    (msg as { type?: unknown }).type === 'control' &&
    typeof (msg as { cmd?: unknown }).cmd === 'string'
  );
}
