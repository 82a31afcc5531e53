// How two runs differ in what they measured. A different request (path, method, scenario,
// load model) makes them measure different things: compare refuses unless told to go on. A
// different command or connection count weakens the comparison: it is listed, not refused.

import type { RunData } from '../run-dir/run-data.js';
import type { LoadResult } from '../load/load-result.js';

export interface Mismatches {
  /** The runs measured different requests. */
  blocking: string[];
  /** The runs measured the same requests under different conditions. */
  weakening: string[];
}

function requestPath(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return url;
  }
}

function differs(label: string, b: unknown, a: unknown, out: string[]): void {
  if (JSON.stringify(b) !== JSON.stringify(a))
    out.push(`${label}: ${JSON.stringify(b) ?? 'none'} before, ${JSON.stringify(a) ?? 'none'} after`);
}

export function runMismatches(before: RunData, after: RunData, bl: LoadResult, al: LoadResult): Mismatches {
  const blocking: string[] = [];
  const weakening: string[] = [];
  differs('request path', requestPath(bl.url), requestPath(al.url), blocking);
  differs('method', bl.options.method, al.options.method, blocking);
  differs('scenario requests', bl.options.scenario, al.options.scenario, blocking);
  differs('load model', bl.model, al.model, blocking);
  differs('arrival rate', bl.options.rate, al.options.rate, blocking);
  differs('command', before.meta.command.join(' '), after.meta.command.join(' '), weakening);
  differs('connections', bl.options.connections, al.options.connections, weakening);
  differs('pipelining', bl.options.pipelining, al.options.pipelining, weakening);
  differs('Node version', before.meta.nodeVersion, after.meta.nodeVersion, weakening);
  return { blocking, weakening };
}
