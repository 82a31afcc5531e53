// Reads telemetry.ndjson back, line by line (it can be large), and groups the agents'
// messages by (pid, threadId). Damaged lines are skipped and described, never thrown:
// a run cut short by a crash or SIGKILL usually ends in half a line, and a line that is JSON
// but lacks fields its type has (telemetry-shape.ts) would fail an analyzer later.

import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { PROTOCOL_VERSION, type AgentMessage, type ProfileMessage } from '../agent/protocol.js';
import type { ThreadTelemetry } from './run-data.js';
import { hasMessageShape } from './telemetry-shape.js';
import { MERGE_SAMPLES_ABOVE_BYTES, mergeable, mergeSamples } from './merge-samples.js';

export interface TelemetryContents {
  threads: ThreadTelemetry[];
  /** `profile` messages: the profile files the agents announced. */
  profiles: ProfileMessage[];
  warnings: string[];
}

/** Detailed warnings per kind of damage; beyond this, only a count. */
const MAX_DETAILED = 5;

function isAgentMessage(x: unknown): x is AgentMessage {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  return typeof m.type === 'string' && typeof m.pid === 'number' && typeof m.threadId === 'number';
}

function emptyThread(pid: number, threadId: number): ThreadTelemetry {
  return { pid, threadId, listens: [], samples: [], gc: [], growth: [], stalls: [], agentErrors: [], primary: [] };
}

/** Index of each thread's stalls by start (a long run has many: no scan per message). */
type StallIndex = WeakMap<ThreadTelemetry, Map<number, number>>;

/** Files one message under its thread. */
function addMessage(thread: ThreadTelemetry, m: AgentMessage, stallIndex: StallIndex, merge: boolean): void {
  switch (m.type) {
    case 'hello':
      thread.hello = m;
      break;
    case 'listen':
      thread.listens.push(m);
      break;
    case 'sample': {
      // A long run's samples are kept as per-second aggregates (merge-samples.ts).
      const last = thread.samples[thread.samples.length - 1];
      if (merge && last !== undefined && mergeable(last, m)) thread.samples[thread.samples.length - 1] = mergeSamples(last, m);
      else thread.samples.push(m);
      break;
    }
    // One push per event: a spread of an unbounded array overflows the stack.
    case 'gc':
      for (const e of m.events) thread.gc.push(e);
      break;
    case 'growth':
      thread.growth.push(m);
      break;
    case 'stall': {
      // An ongoing stall is re-sent with its final duration: keep one entry per start.
      let byStart = stallIndex.get(thread);
      if (!byStart) stallIndex.set(thread, (byStart = new Map()));
      const i = byStart.get(m.start);
      if (i === undefined) {
        byStart.set(m.start, thread.stalls.length);
        thread.stalls.push(m);
      } else thread.stalls[i] = m;
      break;
    }
    case 'agent-error':
      thread.agentErrors.push(m);
      break;
    case 'primary':
      (thread.primary ??= []).push(m);
      break;
    case 'bye':
      // What ended the process, as its agent saw it (agent/exit-cause.ts): the last word counts.
      if (m.reason === 'exit' && typeof m.cause === 'object' && m.cause !== null) thread.exitCause = m.cause;
      break;
    default:
      break;
  }
}

export async function readTelemetry(file: string): Promise<TelemetryContents> {
  const threads = new Map<string, ThreadTelemetry>();
  const profiles: ProfileMessage[] = [];
  const bad: number[] = [];
  const incomplete: number[] = [];
  const stallIndex: StallIndex = new WeakMap();
  const versions = new Set<unknown>();
  let lineNo = 0;
  let lastBad = false;
  const merge = statSync(file).size > MERGE_SAMPLES_ABOVE_BYTES;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    lastBad = !isAgentMessage(parsed);
    if (lastBad) {
      bad.push(lineNo);
      continue;
    }
    if (!hasMessageShape(parsed as Record<string, unknown>)) {
      incomplete.push(lineNo);
      continue;
    }
    const m = parsed as AgentMessage;
    if (m.v !== PROTOCOL_VERSION && versions.size < 10) versions.add(m.v);
    if (m.type === 'profile') profiles.push(m);
    const key = `${m.pid}:${m.threadId}`;
    let thread = threads.get(key);
    if (!thread) threads.set(key, (thread = emptyThread(m.pid, m.threadId)));
    addMessage(thread, m, stallIndex, merge);
  }
  return {
    threads: sortThreads([...threads.values()]),
    profiles,
    warnings: [...describeDamage(bad, lastBad, versions), ...describeIncomplete(incomplete)],
  };
}

function sortThreads(threads: ThreadTelemetry[]): ThreadTelemetry[] {
  for (const t of threads) {
    t.samples.sort((a, b) => a.t - b.t);
    t.primary?.sort((a, b) => a.t - b.t);
  }
  return threads.sort((a, b) => a.pid - b.pid || a.threadId - b.threadId);
}

function describeIncomplete(lines: number[]): string[] {
  const out = lines
    .slice(0, MAX_DETAILED)
    .map((n) => `telemetry.ndjson: line ${n} is an agent message with missing or malformed fields and was skipped`);
  if (lines.length > MAX_DETAILED)
    out.push(`telemetry.ndjson: ${lines.length - MAX_DETAILED} more agent messages with missing or malformed fields were skipped`);
  return out;
}

function describeDamage(bad: number[], lastBad: boolean, versions: Set<unknown>): string[] {
  const out: string[] = [];
  const inner = lastBad ? bad.slice(0, -1) : bad;
  if (lastBad)
    out.push(
      `telemetry.ndjson: the last line (${bad[bad.length - 1]}) is truncated or malformed and was skipped; the run was probably cut short`,
    );
  for (const n of inner.slice(0, MAX_DETAILED)) out.push(`telemetry.ndjson: line ${n} is not an agent message and was skipped`);
  if (inner.length > MAX_DETAILED) out.push(`telemetry.ndjson: ${inner.length - MAX_DETAILED} more malformed lines were skipped`);
  if (versions.size > 0) {
    out.push(
      `telemetry.ndjson: messages of agent protocol version ${[...versions].join(', ')} (this hotpath reads version ${PROTOCOL_VERSION}); figures may be incomplete`,
    );
  }
  return out;
}
