// Answers counted by their lines, for the client sockets of line protocols (a Redis-like store
// answering `+OK` or `:1`, memcached's text answers, SMTP-like or JSON-lines services): one
// answer a line, so the answers a chunk carries are the lines that start in it, whatever their
// sizes and however many came back together. The byte-size pairing of socket-waits.ts reads a
// chunk's answers from the socket's mean answer size: two answers of a pair read as one when
// their sizes differ enough, and a burst of writes before the first answer (20 requests' commands
// at once) reads the first answers short and pairs them with every write waiting.
//
// A socket is read as a line protocol from its first answering chunks (LINES_LEARN_CHUNKS): most
// end a line (a long answer split over chunks ends one in a later chunk), and the lines started
// are no more than the writes made (a protocol whose answers take several lines, such as Redis'
// bulk strings `$5\r\nhello\r\n`, starts more lines than it has writes, and is paired by size).
// Binary protocols (Postgres, MySQL) rarely end a chunk with a newline byte. Only newline bytes
// are looked for (a native search); the payload is neither copied nor kept.

/** A socket's first answering chunks that decide whether it speaks a line protocol. */
export const LINES_LEARN_CHUNKS = 16;
/** The share of those chunks that must end a line. */
export const LINES_MIN_ENDED_SHARE = 0.75;
/** Chunks longer than this are not searched (an answer this long is no line protocol's to pair by lines). */
export const LINES_MAX_CHUNK = 65_536;

const NEWLINE = 0x0a;

export interface AnswerLines {
  /** Undefined while learning; then whether the socket's answers are counted by lines. */
  decided: boolean | undefined;
  /** Answering chunks seen while learning, and how many of them ended a line. */
  chunks: number;
  ended: number;
  /** Lines started in those chunks. */
  starts: number;
  /** The last chunk ended a line (the next byte starts an answer). */
  atLineStart: boolean;
}

export const newAnswerLines = (): AnswerLines => ({ decided: undefined, chunks: 0, ended: 0, starts: 0, atLineStart: true });

/**
 * The lines that start in a chunk (a line starts at its first byte when the chunk before ended
 * one, and after each newline but a final one), and whether it ends a line; undefined for a chunk
 * too long to search or of an unknown kind.
 */
export function linesIn(chunk: unknown, atLineStart: boolean): { starts: number; endsLine: boolean } | undefined {
  let length: number;
  let next: (from: number) => number;
  if (typeof chunk === 'string') {
    length = chunk.length;
    next = (from) => chunk.indexOf('\n', from);
  } else if (chunk instanceof Uint8Array) {
    length = chunk.length;
    next = (from) => chunk.indexOf(NEWLINE, from);
  } else return undefined;
  if (length === 0 || length > LINES_MAX_CHUNK) return undefined;
  let starts = atLineStart ? 1 : 0;
  for (let at = next(0); at >= 0; at = next(at + 1)) if (at < length - 1) starts++;
  return { starts, endsLine: next(length - 1) === length - 1 };
}

/**
 * How many answers start in a chunk that arrived with `waiting` writes waiting, by its lines: a
 * number while the socket is (or may yet be) a line protocol, undefined when it is paired by size.
 * `writes` is the socket's writes so far; the chunk is counted in the learning.
 */
export function answersByLines(l: AnswerLines, chunk: unknown, waiting: number, writes: number): number | undefined {
  if (l.decided === false) return undefined;
  const lines = linesIn(chunk, l.atLineStart);
  if (lines === undefined) {
    if (l.decided === undefined) l.decided = false;
    l.atLineStart = true;
    return undefined;
  }
  l.atLineStart = lines.endsLine;
  if (l.decided === undefined && waiting > 0) {
    l.chunks++;
    if (lines.endsLine) l.ended++;
    l.starts += lines.starts;
    if (l.starts > writes) l.decided = false;
    else if (l.chunks >= LINES_LEARN_CHUNKS) l.decided = l.ended >= l.chunks * LINES_MIN_ENDED_SHARE;
    // Until decided, lines pair the answers while every chunk so far ended one.
    else if (l.ended < l.chunks) return undefined;
  }
  return l.decided === false ? undefined : lines.starts;
}
