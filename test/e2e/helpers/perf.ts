// Whether Linux perf can record here (tests of `hotpath run --native` skip with the reason when not).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPerf } from '../../../src/native/perf-recorder.js';

let cached: string | false | undefined;

/** Why perf cannot record a process here, or false when it can. */
export function perfSkipReason(): string | false {
  if (cached !== undefined) return cached;
  const found = findPerf(process.env);
  if (!('path' in found)) return (cached = `perf unavailable: ${found.reason}`);
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-perf-probe-'));
  try {
    const r = spawnSync(found.path, ['record', '-q', '-g', '-o', join(dir, 'probe.data'), '--', process.execPath, '-e', '0'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    cached =
      r.status === 0 ? false : `perf cannot record here: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0]}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return cached;
}
