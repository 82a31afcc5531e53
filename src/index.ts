// The programmatic API: `import { load } from 'hotpath'`.
export { HotpathError, errorCodes, type ErrorCode } from './errors.js';
export { load, type LoadRun, type LoadHooks, type LoadEvents, type LoadProgress, type LoadOptions, type LoadPhase } from './load/load.js';
export { loadOptionSpecs } from './load/load-options.js';
export type { LoadResult, LatencyStats, TimelinePoint, GeneratorWorkerStats, SetupOutcome } from './load/load-result.js';
export type { ScenarioRequest } from './load/request-template.js';
export { run, type RunHooks, type RunResult } from './run/run.js';
export { runOptionSpecs, type RunOptions } from './run/run-options.js';
export { readRunDir } from './run-dir/read-run-dir.js';
export type { RunMeta } from './run-dir/schema.js';
export type { RunData, ThreadTelemetry, ProfileRef } from './run-dir/run-data.js';
