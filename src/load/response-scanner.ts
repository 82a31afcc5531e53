// A purpose-built HTTP/1.1 response scanner for the load engine. It finds where each
// response ends (status line, Content-Length, chunked with trailers, close-delimited,
// 1xx skipped) by scanning Buffers in place: bodies are skipped, never copied, and a
// complete response costs no allocation. One scanner per connection; pipelined responses
// arrive back to back and are reported one by one, in order, to the connection (the sink).

/** What the scanner reports to its connection. Methods, not closures: nothing allocated per response. */
export interface ScanSink {
  /** A final response ended. `close`: the server asked to close the connection after it. */
  onResponse(status: number, close: boolean): void;
  /** True when the oldest request still waiting for its response was a HEAD. */
  headPending(): boolean;
}

const CR = 13;
const LF = 10;
const CRLFCRLF = Buffer.from('\r\n\r\n');
const HTTP1 = Buffer.from('HTTP/1.');
const MAX_HEAD_BYTES = 64 * 1024;

const S_HEAD = 0;
const S_BODY = 1;
const S_CHUNK_SIZE = 2;
const S_CHUNK_EXT = 3;
const S_CHUNK_DATA = 4;
const S_CHUNK_END = 5;
const S_TRAILERS = 6;
const S_UNTIL_CLOSE = 7;

const CONTENT_LENGTH = Buffer.from('content-length');
const CONNECTION = Buffer.from('connection');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding');
const CLOSE = Buffer.from('close');
const KEEP_ALIVE = Buffer.from('keep-alive');
const CHUNKED = Buffer.from('chunked');

/** Case-insensitive compare of buf[start, end) with a lower-case ASCII word. */
function equalsLower(buf: Buffer, start: number, end: number, word: Buffer): boolean {
  if (end - start !== word.length) return false;
  for (let i = 0; i < word.length; i++) {
    if ((buf[start + i] | 0x20) !== word[i]) return false;
  }
  return true;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

export class ResponseScanner {
  private state = S_HEAD;
  /** Bytes of a response head split across reads (rare: heads are small). */
  private pending: Buffer | null = null;
  private remaining = 0;
  private chunkSize = 0;
  private sawDigit = false;
  private lineLen = 0;
  private status = 0;
  private close = false;
  /** Set after malformed input; the connection must be discarded. */
  failed = false;

  constructor(private readonly sink: ScanSink) {}

  /** True while part of a response has been read (so a close now loses it). */
  get midResponse(): boolean {
    return this.state !== S_HEAD || this.pending !== null;
  }

  reset(): void {
    this.state = S_HEAD;
    this.pending = null;
    this.failed = false;
  }

  /**
   * Scans one read: the first `length` bytes of `chunk` (a reused read buffer may be longer).
   * Returns false on malformed input (the caller drops the connection).
   */
  feed(chunk: Buffer, length = chunk.length): boolean {
    let buf = chunk;
    let len = length;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, chunk.subarray(0, length)]);
      len = buf.length;
      this.pending = null;
    }
    let pos = 0;
    while (pos < len) {
      switch (this.state) {
        case S_HEAD:
          pos = this.head(buf, pos, len);
          break;
        case S_BODY:
          pos = this.body(buf, pos, len);
          break;
        case S_UNTIL_CLOSE:
          return true;
        default:
          pos = this.chunked(buf, pos, len);
          break;
      }
      if (pos < 0) {
        this.failed = true;
        return false;
      }
    }
    return true;
  }

  /** The server closed the connection: ends a close-delimited body. False if a response was cut short. */
  end(): boolean {
    if (this.state === S_UNTIL_CLOSE) {
      this.state = S_HEAD;
      this.sink.onResponse(this.status, true);
      return true;
    }
    return !this.midResponse;
  }

  private head(buf: Buffer, pos: number, len: number): number {
    const end = buf.indexOf(CRLFCRLF, pos);
    if (end === -1 || end + 4 > len) {
      if (len - pos > MAX_HEAD_BYTES) return -1;
      this.pending = Buffer.from(buf.subarray(pos, len)); // a copy: the read buffer is reused
      return len;
    }
    if (!this.parseHead(buf, pos, end)) return -1;
    return end + 4;
  }

  /** Reads the status line and the three headers that decide framing, then picks the body state. */
  private parseHead(buf: Buffer, start: number, end: number): boolean {
    // "HTTP/1.x SSS"
    if (end - start < 12 || buf.compare(HTTP1, 0, 7, start, start + 7) !== 0 || buf[start + 8] !== 0x20) return false;
    const d0 = buf[start + 9] - 48,
      d1 = buf[start + 10] - 48,
      d2 = buf[start + 11] - 48;
    if (d0 < 1 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return false;
    const status = d0 * 100 + d1 * 10 + d2;
    let close = buf[start + 7] === 0x30; // HTTP/1.0 closes unless it says keep-alive
    let length = -1;
    let chunked = false;
    let line = buf.indexOf(LF, start) + 1;
    while (line > 0 && line < end) {
      let eol = buf.indexOf(LF, line);
      if (eol === -1 || eol > end + 2) eol = end + 2;
      const c = buf[line] | 0x20;
      if (c === 0x63 || c === 0x74) {
        const colon = buf.indexOf(0x3a, line);
        if (colon !== -1 && colon < eol) {
          let vs = colon + 1;
          let ve = eol;
          while (vs < ve && isSpace(buf[vs])) vs++;
          while (ve > vs && (buf[ve - 1] === CR || buf[ve - 1] === LF || isSpace(buf[ve - 1]))) ve--;
          if (equalsLower(buf, line, colon, CONTENT_LENGTH)) {
            length = 0;
            for (let i = vs; i < ve; i++) {
              const dg = buf[i] - 48;
              if (dg < 0 || dg > 9) return false;
              length = length * 10 + dg;
            }
            if (vs === ve) return false;
          } else if (equalsLower(buf, line, colon, CONNECTION)) {
            if (equalsLower(buf, vs, ve, CLOSE)) close = true;
            else if (equalsLower(buf, vs, ve, KEEP_ALIVE)) close = false;
            else close = connectionListCloses(buf.toString('latin1', vs, ve), close);
          } else if (equalsLower(buf, line, colon, TRANSFER_ENCODING)) {
            chunked = ve - vs >= 7 && equalsLower(buf, ve - 7, ve, CHUNKED);
          }
        }
      }
      line = eol + 1;
    }
    if (status < 200 && status !== 101) return true; // interim response: the final one follows
    this.status = status;
    this.close = close;
    if (status === 101 || status === 204 || status === 304 || this.sink.headPending()) return this.complete();
    if (chunked) {
      this.state = S_CHUNK_SIZE;
      this.chunkSize = 0;
      this.sawDigit = false;
    } else if (length >= 0) {
      if (length === 0) return this.complete();
      this.state = S_BODY;
      this.remaining = length;
    } else {
      this.state = S_UNTIL_CLOSE;
    }
    return true;
  }

  private complete(): true {
    this.state = S_HEAD;
    this.sink.onResponse(this.status, this.close);
    return true;
  }

  private body(buf: Buffer, pos: number, len: number): number {
    const take = Math.min(this.remaining, len - pos);
    this.remaining -= take;
    if (this.remaining === 0) this.complete();
    return pos + take;
  }

  /** Chunked framing: size line (hex, extensions ignored), data, CRLF; 0 then trailers then CRLF. */
  private chunked(buf: Buffer, pos: number, len: number): number {
    while (pos < len) {
      const c = buf[pos];
      switch (this.state) {
        case S_CHUNK_DATA: {
          const take = Math.min(this.remaining, len - pos);
          this.remaining -= take;
          pos += take;
          if (this.remaining === 0) {
            this.state = S_CHUNK_END;
            this.remaining = 2;
          }
          continue;
        }
        case S_CHUNK_END:
          if ((this.remaining === 2 && c !== CR) || (this.remaining === 1 && c !== LF)) return -1;
          pos++;
          if (--this.remaining === 0) {
            this.state = S_CHUNK_SIZE;
            this.chunkSize = 0;
            this.sawDigit = false;
          }
          continue;
        case S_CHUNK_SIZE: {
          pos++;
          const h = hexValue(c);
          if (h >= 0) {
            this.chunkSize = this.chunkSize * 16 + h;
            this.sawDigit = true;
            if (this.chunkSize > Number.MAX_SAFE_INTEGER / 16) return -1;
          } else if (c === 0x3b || isSpace(c)) this.state = S_CHUNK_EXT;
          else if (c === LF) {
            if (!this.chunkSizeDone()) return -1;
          } else if (c !== CR) return -1;
          continue;
        }
        case S_CHUNK_EXT:
          pos++;
          if (c === LF && !this.chunkSizeDone()) return -1;
          continue;
        case S_TRAILERS:
          pos++;
          if (c === LF) {
            if (this.lineLen === 0) {
              this.complete();
              return pos;
            }
            this.lineLen = 0;
          } else if (c !== CR) this.lineLen++;
          continue;
        default:
          return pos;
      }
    }
    return pos;
  }

  private chunkSizeDone(): boolean {
    if (!this.sawDigit) return false;
    if (this.chunkSize === 0) {
      this.state = S_TRAILERS;
      this.lineLen = 0;
    } else {
      this.state = S_CHUNK_DATA;
      this.remaining = this.chunkSize;
    }
    return true;
  }
}

/** `Connection: Upgrade, close` and other lists (rare; allocation is fine here). */
function connectionListCloses(value: string, current: boolean): boolean {
  const tokens = value
    .toLowerCase()
    .split(',')
    .map((t) => t.trim());
  if (tokens.includes('close')) return true;
  if (tokens.includes('keep-alive')) return false;
  return current;
}
