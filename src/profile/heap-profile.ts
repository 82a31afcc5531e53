// The V8 sampling heap profile (CDP HeapProfiler.SamplingHeapProfile, the `.heapprofile`
// file): a nested tree of call frames with selfSize in bytes. Validated at the JSON boundary.

import { hotpathError } from '../errors.js';
import type { CpuCallFrame } from './cpu-profile.js';

export interface HeapProfileNode {
  callFrame: CpuCallFrame;
  /** Bytes allocated by this frame itself (sampled). */
  selfSize: number;
  id: number;
  children: HeapProfileNode[];
}

export interface HeapProfile {
  head: HeapProfileNode;
  samples?: { size: number; nodeId: number; ordinal: number }[];
}

function malformed(why: string, source: string | undefined): Error {
  return hotpathError('HOTPATH_ERR_PROFILE', `${source ?? 'The heap profile'} is not a valid .heapprofile: ${why}`, {
    details: { file: source },
  });
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Checks the shape of a parsed `.heapprofile`, iteratively (deep trees must not overflow the stack). */
export function asHeapProfile(value: unknown, source?: string): HeapProfile {
  if (!isObj(value) || !isObj(value.head)) throw malformed('"head" is missing', source);
  if (value.samples !== undefined && !Array.isArray(value.samples)) throw malformed('"samples" is not an array', source);
  const stack: unknown[] = [value.head];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!isObj(n) || !isObj(n.callFrame) || typeof n.selfSize !== 'number' || !Array.isArray(n.children)) {
      throw malformed('a node lacks "callFrame", "selfSize" or "children"', source);
    }
    const cf = n.callFrame;
    if (
      typeof cf.functionName !== 'string' ||
      typeof cf.url !== 'string' ||
      typeof cf.lineNumber !== 'number' ||
      typeof cf.columnNumber !== 'number'
    ) {
      throw malformed('a node has a malformed callFrame', source);
    }
    for (const c of n.children) stack.push(c);
  }
  return value as unknown as HeapProfile;
}

export function parseHeapProfile(text: string, source?: string): HeapProfile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw hotpathError('HOTPATH_ERR_PROFILE', `${source ?? 'The heap profile'} is not JSON: ${(cause as Error).message}`, {
      cause,
      details: { file: source },
    });
  }
  return asHeapProfile(value, source);
}
