// The programmatic API: `import { load } from 'hotpath'`.
export { HotpathError, errorCodes, type ErrorCode } from './errors.js';
export { load, type LoadRun, type LoadHooks, type LoadEvents, type LoadProgress, type LoadOptions, type LoadPhase } from './load/load.js';
export { loadOptionSpecs } from './load/load-options.js';
export type { LoadResult, LatencyStats, TimelinePoint, GeneratorWorkerStats, SetupOutcome } from './load/load-result.js';
export type { ScenarioRequest } from './load/request-template.js';
export { run, type RunHooks, type RunResult } from './run/run.js';
export { runOptionSpecs, type RunOptions } from './run/run-options.js';
export { readRunDir } from './profile/read-run.js';
export type { RunMeta } from './run-dir/schema.js';
export type { RunData, ThreadTelemetry, ProfileRef } from './run-dir/run-data.js';
export type { CallTree, Frame, FrameKind, WorkKind } from './profile/call-tree.js';
export { buildCallTree, type BuildCallTreeOptions } from './profile/build-call-tree.js';
export { buildHeapTree, topAllocators } from './profile/build-heap-tree.js';
export { readCpuProfile, readHeapProfile } from './profile/read-profile.js';
export { hotspots, type ProfileHotspot } from './profile/hotspots.js';
export { workBreakdown, callersOfWork } from './profile/work-breakdown.js';
export { exportProfile, type ExportOptions, type ExportFormat } from './report/export/export-profile.js';
export { renderReportMarkdown } from './report/export/report-md.js';
