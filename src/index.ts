// The programmatic API: `import { load } from 'hotpath'`.
export { HotpathError, errorCodes, type ErrorCode } from './errors.js';
export { load, type LoadRun, type LoadHooks, type LoadEvents, type LoadProgress, type LoadOptions, type LoadPhase } from './load/load.js';
export { loadOptionSpecs } from './load/load-options.js';
export type { LoadResult, LatencyStats, TimelinePoint, GeneratorWorkerStats, SetupOutcome } from './load/load-result.js';
export type { ScenarioRequest } from './load/request-template.js';
