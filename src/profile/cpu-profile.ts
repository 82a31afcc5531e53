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
  return hotpathError('HOTPATH_ERR_PROFILE', `${source ?? 'The CPU profile'} is not a valid .cpuprofile: ${why}`, {
    details: { file: source },
  });
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Checks the shape of a parsed `.cpuprofile` in linear time (it may hold 100k nodes), and that
 * its nodes form a tree: every child and sample names an existing node, no node has two parents
 * and no chain of children loops back (readers walk parents and children without guards).
 */
export function asCpuProfile(value: unknown, source?: string): CpuProfile {
  if (!isObj(value)) throw malformed('not a JSON object', source);
  const { nodes, samples, timeDeltas, startTime, endTime } = value;
  if (!Array.isArray(nodes) || nodes.length === 0) throw malformed('"nodes" is missing or empty', source);
  if (!Array.isArray(samples)) throw malformed('"samples" is missing', source);
  if (!Array.isArray(timeDeltas)) throw malformed('"timeDeltas" is missing', source);
  if (timeDeltas.length !== samples.length) throw malformed('"samples" and "timeDeltas" differ in length', source);
  if (!isNum(startTime) || !isNum(endTime)) throw malformed('"startTime"/"endTime" are not numbers', source);
  const index = new Map<number, number>();
  for (let i = 0; i < nodes.length; i++) {
    const n: unknown = nodes[i];
    if (!isObj(n) || !isNum(n.id) || !isObj(n.callFrame)) throw malformed('a node lacks "id" or "callFrame"', source);
    const cf = n.callFrame;
    if (typeof cf.functionName !== 'string' || typeof cf.url !== 'string' || !isNum(cf.lineNumber) || !isNum(cf.columnNumber)) {
      throw malformed(`node ${n.id} has a malformed callFrame`, source);
    }
    if (n.children !== undefined && !(Array.isArray(n.children) && n.children.every(isNum)))
      throw malformed(`node ${n.id} has malformed "children"`, source);
    if (n.hitCount !== undefined && !isNum(n.hitCount)) throw malformed(`node ${n.id} has a malformed "hitCount"`, source);
    if (
      n.positionTicks !== undefined &&
      !(Array.isArray(n.positionTicks) && n.positionTicks.every((t) => isObj(t) && isNum(t.line) && isNum(t.ticks)))
    ) {
      throw malformed(`node ${n.id} has malformed "positionTicks"`, source);
    }
    if (index.has(n.id)) throw malformed(`node id ${n.id} is used twice`, source);
    index.set(n.id, i);
  }
  checkTree(nodes as CpuProfileNode[], index, source);
  for (let k = 0; k < samples.length; k++) {
    if (!isNum(samples[k]) || !index.has(samples[k] as number))
      throw malformed(`sample ${k} names node ${JSON.stringify(samples[k])}, which does not exist`, source);
    if (!isNum(timeDeltas[k])) throw malformed(`time delta ${k} is not a number`, source);
  }
  return value as unknown as CpuProfile;
}

/** Every child id exists and has one parent; every node hangs from a node without a parent (no cycle). */
function checkTree(nodes: CpuProfileNode[], index: Map<number, number>, source: string | undefined): void {
  const parent = new Int32Array(nodes.length).fill(-1);
  for (let i = 0; i < nodes.length; i++) {
    for (const id of nodes[i].children ?? []) {
      const c = index.get(id);
      if (c === undefined) throw malformed(`node ${nodes[i].id} names a child ${id} that does not exist`, source);
      if (parent[c] !== -1 || c === i)
        throw malformed(`node ${id} has two parents (the nodes form a cycle or a graph, not a tree)`, source);
      parent[c] = i;
    }
  }
  if (parent[0] !== -1)
    throw malformed(`the root node ${nodes[0].id} is the child of node ${nodes[parent[0]].id}: the nodes form a cycle`, source);
  // From every node without a parent, mark what hangs below; a node left unmarked lies on a cycle.
  const seen = new Uint8Array(nodes.length);
  const stack: number[] = [];
  for (let i = 0; i < nodes.length; i++) if (parent[i] === -1) stack.push(i);
  while (stack.length > 0) {
    const i = stack.pop()!;
    seen[i] = 1;
    for (const id of nodes[i].children ?? []) stack.push(index.get(id)!);
  }
  const cyclic = seen.indexOf(0);
  if (cyclic !== -1) throw malformed(`node ${nodes[cyclic].id} lies on a cycle of children`, source);
}

/** Parses the text of a `.cpuprofile` file. */
export function parseCpuProfile(text: string, source?: string): CpuProfile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw hotpathError('HOTPATH_ERR_PROFILE', `${source ?? 'The CPU profile'} is not JSON: ${(cause as Error).message}`, {
      cause,
      details: { file: source },
    });
  }
  return asCpuProfile(value, source);
}
