// The run's phases in order, with epoch-ms bounds, as meta.json records them. Entering a
// phase closes the previous one; every change is also told to the agents, so their
// telemetry can be cut into the same windows.

import type { RunPhase } from '../agent/protocol.js';
import type { RunMeta } from '../run-dir/schema.js';

export class PhaseLog {
  readonly phases: RunMeta['phases'] = [];

  constructor(private readonly onChange: (phase: RunPhase) => void = () => {}) {}

  get current(): RunPhase | undefined {
    const last = this.phases.at(-1);
    return last && last.end === undefined ? last.phase : undefined;
  }

  enter(phase: RunPhase, at = Date.now()): void {
    if (this.current === phase) return;
    this.close(at);
    this.phases.push({ phase, start: at });
    this.onChange(phase);
  }

  /** Ends the current phase (if any) without starting another. */
  close(at = Date.now()): void {
    const last = this.phases.at(-1);
    if (last && last.end === undefined) last.end = Math.max(at, last.start);
  }

  get(phase: RunPhase): RunMeta['phases'][number] | undefined {
    return this.phases.find((p) => p.phase === phase);
  }
}
