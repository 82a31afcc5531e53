// The last few kilobytes of a stream's output, kept in memory for error messages while the
// full output goes to a file. Bounded: a target printing megabytes costs one copy per chunk.

const DEFAULT_MAX_BYTES = 16 * 1024;

export class OutputTail {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_MAX_BYTES) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes - this.chunks[0].length >= this.maxBytes) {
      this.bytes -= this.chunks[0].length;
      this.chunks.shift();
    }
  }

  /** The last `n` non-empty lines (the first may be cut short when the tail starts mid-line). */
  lines(n = 20): string[] {
    return tailLines(Buffer.concat(this.chunks).subarray(-this.maxBytes).toString('utf8'), n);
  }
}

export function tailLines(text: string, n: number): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l !== '')
    .slice(-n);
}
