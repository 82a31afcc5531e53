// Builds report.json from a run read back from its directory: target, load, telemetry
// summary, hotspots and the ordered findings. Pure: no writing, no measuring.

import type { RunData } from '../run-dir/run-data.js';
import { REPORT_VERSION, type Hotspot, type Report } from './report-schema.js';
import { summarizeTelemetry } from './telemetry-summary.js';
import { analyzeRun } from '../analyze/analyze-run.js';
import { hotspotsOf } from '../analyze/signals/cpu-view.js';
import { agentErrorsOf } from '../analyze/signals/agent-errors.js';

/** How many hotspots report.json keeps (the UI has the full profile). */
export const REPORT_HOTSPOTS = 25;

export function buildReport(run: RunData): Report {
  const { meta } = run;
  return {
    version: REPORT_VERSION,
    hotpathVersion: meta.hotpathVersion,
    target: {
      command: meta.command,
      cwd: run.cwd,
      ...(meta.target?.url !== undefined ? { url: meta.target.url } : {}),
      ...(meta.nodeVersion !== undefined ? { nodeVersion: meta.nodeVersion } : {}),
      outcome: meta.outcome,
    },
    load: run.load ?? null,
    telemetry: summarizeTelemetry(run),
    hotspots: reportHotspots(run),
    findings: analyzeRun(run),
    runDir: run.dir,
    agentErrors: agentErrorsOf(run),

    ...(run.readWarnings.length > 0 ? { warnings: [...run.readWarnings] } : {}),
  };
}

function reportHotspots(run: RunData): Hotspot[] {
  try {
    return hotspotsOf(run).slice(0, REPORT_HOTSPOTS);
  } catch {
    return [];
  }
}
