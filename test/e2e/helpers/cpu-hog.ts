// A bounded CPU hog for the busy-machine runs (HOTPATH_BUSY=1): one process per core spinning
// in a loop, as another tenant of a shared runner or a laptop's build would. Each spinner stops
// by itself at its deadline or as soon as the process that started it is gone, and stop() ends
// the ones this process started (by pid).

import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** A spinner never outlives this, whatever happens to the test run. */
export const HOG_MAX_MS = 20 * 60_000;

const SPIN = `
const end = Date.now() + Number(process.argv[1]);
const parent = Number(process.argv[2]);
let x = 0;
while (Date.now() < end) {
  for (let i = 0; i < 2e6; i++) x = (x * 31 + i) % 1000003;
  try { process.kill(parent, 0); } catch { break; }
}
`;

export interface CpuHog {
  processes: number;
  stop(): void;
}

/** Starts one spinning process per core (or `processes`) for at most `maxMs`. */
export function startCpuHog(options: { processes?: number; maxMs?: number } = {}): CpuHog {
  const n = options.processes ?? availableParallelism();
  const maxMs = Math.min(options.maxMs ?? HOG_MAX_MS, HOG_MAX_MS);
  const children: ChildProcess[] = [];
  for (let i = 0; i < n; i++) {
    const child = spawn(process.execPath, ['-e', SPIN, String(maxMs), String(process.pid)], { stdio: 'ignore' });
    child.unref();
    children.push(child);
  }
  return {
    processes: n,
    stop() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    },
  };
}

/** HOTPATH_BUSY=1: run the suite beside a CPU hog (see test/fixtures/scenarios/README.md). */
export const busyMachine = process.env.HOTPATH_BUSY === '1';
