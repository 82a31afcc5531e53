// One load connection inside a worker: a raw net/tls socket, its response scanner and the
// FIFO of requests in flight (send time, intended time, HEAD flag) kept in typed arrays.
// The hot path (send, onData, onResponse) allocates nothing per request: handlers are
// created once per connection, request bytes are prebuilt, times are plain numbers.

import type net from 'node:net';
import { openSocket, readyEvent, supportsOnRead, type OnRead } from './open-socket.js';
import { ResponseScanner, type ScanSink } from './response-scanner.js';
import type { WorkerTarget } from './worker-protocol.js';

/** What a connection needs from the engine that owns it. */
export interface ConnectionOwner {
  readonly target: WorkerTarget;
  readonly templates: readonly { bytes: Buffer; head: boolean }[];
  readonly keepalive: boolean;
  connected(conn: Connection): void;
  sent(bytes: number): void;
  received(bytes: number): void;
  completed(conn: Connection, status: number, sendAt: number, intendedAt: number): void;
  /** The connection was dropped: by an errno, `EOF` (closed mid-response), parse error or recycle. */
  dropped(conn: Connection, lost: number, reason: DropReason, code?: string): void;
}

export type DropReason = 'error' | 'eof' | 'parse' | 'recycle' | 'idle-close' | 'timeout';

function noop(): void {}

/** One read buffer per worker thread, shared by its connections: reads are scanned synchronously, then it is reused. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

export class Connection implements ScanSink {
  socket: net.Socket | null = null;
  isConnected = false;
  /** Set when the connection must be closed once the current read is scanned. */
  recycle = false;
  inFlight = 0;
  /** performance.now() when the current socket was opened (connect timeout). */
  openedAt = 0;
  /** Whether the current socket ever connected (a socket that never did is retried after a pause). */
  everConnected = false;
  /** Closed model with -a: requests set aside for this connection while it reconnects. */
  reserved = 0;
  private first = 0;
  private nextTemplate = 0;
  private closedByServer = false;
  private readonly sendAt: Float64Array;
  private readonly intendedAt: Float64Array;
  private readonly heads: Uint8Array;
  private readonly scanner = new ResponseScanner(this);

  constructor(
    readonly id: number,
    private readonly owner: ConnectionOwner,
    readonly depth: number,
  ) {
    this.sendAt = new Float64Array(depth);
    this.intendedAt = new Float64Array(depth);
    this.heads = new Uint8Array(depth);
  }

  open(): void {
    const t = this.owner.target;
    const direct = supportsOnRead(t);
    const s = openSocket(t, direct ? this.onread : undefined);
    s.setNoDelay(true);
    s.on(readyEvent(t), this.onConnect);
    if (!direct) s.on('data', this.onData);
    s.on('end', this.onEnd);
    s.on('error', this.onError);
    this.socket = s;
    this.everConnected = false;
    this.openedAt = performance.now();
  }

  /** Writes the next request of the sequence. `intended` is the planned time (= now in the closed model). */
  send(intended: number, now: number): void {
    const tpls = this.owner.templates;
    const i = this.nextTemplate;
    const tpl = tpls[i];
    this.nextTemplate = i + 1 === tpls.length ? 0 : i + 1;
    let slot = this.first + this.inFlight;
    if (slot >= this.depth) slot -= this.depth;
    this.sendAt[slot] = now;
    this.intendedAt[slot] = intended;
    this.heads[slot] = tpl.head ? 1 : 0;
    this.inFlight++;
    (this.socket as net.Socket).write(tpl.bytes);
    this.owner.sent(tpl.bytes.length);
  }

  cork(): void {
    this.socket?.cork();
  }

  uncork(): void {
    this.socket?.uncork();
  }

  /** Send time of the oldest request in flight. */
  oldestSendAt(): number {
    return this.sendAt[this.first];
  }

  /** Calls fn(sendAt, intendedAt) for every request in flight, oldest first (timeouts). */
  forEachInFlight(fn: (sendAt: number, intendedAt: number) => void): void {
    for (let k = 0, s = this.first; k < this.inFlight; k++, s = s + 1 === this.depth ? 0 : s + 1) {
      fn(this.sendAt[s], this.intendedAt[s]);
    }
  }

  headPending(): boolean {
    return this.inFlight > 0 && this.heads[this.first] === 1;
  }

  onResponse(status: number, close: boolean): void {
    if (this.inFlight === 0) {
      this.scanner.failed = true; // a response nobody asked for: the stream is out of step
      return;
    }
    const slot = this.first;
    this.first = slot + 1 === this.depth ? 0 : slot + 1;
    this.inFlight--;
    if (close || !this.owner.keepalive) {
      this.recycle = true;
      if (close && this.owner.keepalive) this.closedByServer = true;
    }
    this.owner.completed(this, status, this.sendAt[slot], this.intendedAt[slot]);
  }

  /** Closes the socket and forgets what was in flight; returns how many requests were lost. */
  close(): number {
    const s = this.socket;
    if (s !== null) {
      s.removeAllListeners();
      s.on('error', noop);
      s.destroy();
    }
    const lost = this.inFlight;
    this.socket = null;
    this.isConnected = false;
    this.recycle = false;
    this.inFlight = 0;
    this.first = 0;
    this.scanner.reset();
    return lost;
  }

  /** True (once) when the last recycle was asked by the server's `Connection: close`. */
  takeClosedByServer(): boolean {
    const v = this.closedByServer;
    this.closedByServer = false;
    return v;
  }

  private readonly onConnect = (): void => {
    this.isConnected = true;
    this.everConnected = true;
    this.owner.connected(this);
  };

  private readonly onData = (chunk: Buffer, length = chunk.length): void => {
    this.owner.received(length);
    const s = this.socket as net.Socket;
    // With one request in flight a read holds at most one response: nothing to batch.
    const batch = this.depth > 1;
    if (batch) s.cork();
    const ok = this.scanner.feed(chunk, length) && !this.scanner.failed;
    if (batch && this.socket === s) s.uncork();
    if (!ok) this.owner.dropped(this, this.close(), 'parse');
    else if (this.recycle) this.owner.dropped(this, this.close(), 'recycle');
  };

  private readonly onread: OnRead = {
    buffer: READ_BUFFER,
    callback: (bytes: number): boolean => {
      if (this.socket !== null) this.onData(READ_BUFFER, bytes);
      return true;
    },
  };

  private readonly onEnd = (): void => {
    const clean = this.scanner.end();
    if (this.recycle) this.owner.dropped(this, this.close(), 'recycle');
    else if (!clean || this.inFlight > 0) this.owner.dropped(this, this.close(), 'eof', 'EOF');
    else this.owner.dropped(this, this.close(), 'idle-close');
  };

  private readonly onError = (err: NodeJS.ErrnoException): void => {
    this.owner.dropped(this, this.close(), 'error', err.code ?? 'EUNKNOWN');
  };
}
