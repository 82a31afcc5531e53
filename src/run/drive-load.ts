// Drives the load engine for a run: picks the load flags out of the run's options, sends
// the setup requests, and turns the engine's phase events into the run's phases (setup,
// warmup, load, and the end of load), which the run forwards to the agents.

import { loadChecked } from '../load/load.js';
import { pickLoadFlags, type CheckedLoadFlags } from '../load/load-options.js';
import type { LoadResult } from '../load/load-result.js';
import type { ScenarioRequest } from '../load/request-template.js';

export type DrivePhase = 'setup' | 'warmup' | 'load' | 'load-end';

export interface DriveLoadInput {
  url: string;
  /** Unix socket path, when the server listens on one. */
  socket?: string;
  /** The run's options, checked by run(); only the load flags are passed on. */
  options: CheckedLoadFlags;
  setupRequests?: ScenarioRequest[];
  signal: AbortSignal;
  onPhase(phase: DrivePhase, epochMs: number): void;
  onProgress?(second: number, requests: number): void;
}

const phaseOf = { 'warmup-start': 'warmup', 'load-start': 'load', 'load-end': 'load-end' } as const;

export async function driveLoad(input: DriveLoadInput): Promise<LoadResult> {
  if (input.setupRequests?.length) input.onPhase('setup', Date.now());
  const flags = { ...pickLoadFlags(input.options), ...(input.socket === undefined ? {} : { socket: input.socket }) };
  return loadChecked(
    { flags, url: input.url, setup: input.setupRequests, signal: input.signal },
    {
      onPhase: (phase, at) => input.onPhase(phaseOf[phase], at),
      onProgress: (p) => input.onProgress?.(p.second, p.totalRequests),
    },
  );
}
