// The V8 CPU profile (CDP Profiler.Profile, the `.cpuprofile` file) and its validation at the
// JSON boundary: a malformed profile is a coded error, never a crash deep in the model.

import { hotpathError } from '../errors.js';

export interface CpuCallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  /** 0-based. */
  columnNumber: number;
}

export interface CpuProfileNode {
  id: number;
  callFrame: CpuCallFrame;
  hitCount?: number;
  children?: number[];
  /** `line` is 1-based (unlike callFrame.lineNumber). */
  positionTicks?: { line: number; ticks: number }[];
  deoptReason?: string;
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  /** µs, the profile's monotonic clock. */
  startTime: number;
  endTime: number;
  /** Leaf node id of each sample. */
  samples: number[];
  /** µs between samples; the first is relative to startTime. */
  timeDeltas: number[];
}

function malformed(why: string, source: string | undefined): Error {
  return hotpathError('HOTPATH_ERR_PROFILE', `${source ?? 'The CPU profile'} is not a valid .cpuprofile: ${why}`,
    { details: { file: source } });
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Checks the shape of a parsed `.cpuprofile` (cheaply: it may hold 100k nodes). */
export function asCpuProfile(value: unknown, source?: string): CpuProfile {
  if (!isObj(value)) throw malformed('not a JSON object', source);
  const { nodes, samples, timeDeltas, startTime, endTime } = value;
  if (!Array.isArray(nodes) || nodes.length === 0) throw malformed('"nodes" is missing or empty', source);
  if (!Array.isArray(samples)) throw malformed('"samples" is missing', source);
  if (!Array.isArray(timeDeltas)) throw malformed('"timeDeltas" is missing', source);
  if (timeDeltas.length !== samples.length) throw malformed('"samples" and "timeDeltas" differ in length', source);
  if (typeof startTime !== 'number' || typeof endTime !== 'number') throw malformed('"startTime"/"endTime" are not numbers', source);
  for (const n of nodes) {
    if (!isObj(n) || typeof n.id !== 'number' || !isObj(n.callFrame)) throw malformed('a node lacks "id" or "callFrame"', source);
    const cf = n.callFrame;
    if (typeof cf.functionName !== 'string' || typeof cf.url !== 'string') throw malformed(`node ${n.id} has a malformed callFrame`, source);
    if (n.children !== undefined && !Array.isArray(n.children)) throw malformed(`node ${n.id} has malformed "children"`, source);
  }
  return value as unknown as CpuProfile;
}

/** Parses the text of a `.cpuprofile` file. */
export function parseCpuProfile(text: string, source?: string): CpuProfile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw hotpathError('HOTPATH_ERR_PROFILE', `${source ?? 'The CPU profile'} is not JSON: ${(cause as Error).message}`,
      { cause, details: { file: source } });
  }
  return asCpuProfile(value, source);
}
