// `hotpath import <perf.script>`: `perf script` output made elsewhere into a run directory
// with the same report, flame graph and exports as a run (see perf-script.ts).

import { basename, resolve } from 'node:path';
import { hotpathError, isHotpathError } from '../errors.js';
import type { Report } from '../report/report-schema.js';
import { parsePerfScriptFile, type PerfProcess } from './perf-script.js';
import { appDirectory, writeProfileRunDir } from './profile-run-dir.js';

export interface ImportPerfResult {
  dir: string;
  report: Report;
  processes: Omit<PerfProcess, 'profile'>[];
  exports: string[];
  warnings: string[];
}

export async function importPerfScript(file: string, options: { cwd: string; out?: string; pid?: number }): Promise<ImportPerfResult> {
  const path = resolve(options.cwd, file);
  let parsed;
  try {
    // Read as a stream: a long recording's text is never held whole.
    parsed = await parsePerfScriptFile(path, file);
  } catch (err) {
    if (isHotpathError(err)) throw err;
    throw hotpathError(
      'HOTPATH_ERR_PERF_SCRIPT',
      `Cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      { cause: err, details: { file } },
    );
  }
  const warnings: string[] = [];
  if (parsed.skippedLines > 0)
    warnings.push(`${basename(file)}: ${parsed.skippedLines} line(s) that are neither a sample nor a frame were skipped`);
  // The processes worth a profile: the one asked for, else those with JS frames (node), else all.
  let chosen = parsed.processes;
  if (options.pid !== undefined) {
    chosen = chosen.filter((p) => p.pid === options.pid);
    if (chosen.length === 0)
      throw hotpathError(
        'HOTPATH_ERR_PERF_SCRIPT',
        `${file} has no sample of pid ${options.pid}; pids: ${parsed.processes.map((p) => `${p.pid} (${p.comm})`).join(', ')}`,
        { details: { file } },
      );
  } else {
    const withJs = chosen.filter((p) => p.profile.nodes.some((n) => n.callFrame.scriptId === '1'));
    if (withJs.length > 0) chosen = withJs;
  }
  const noJs = chosen.filter((p) => !p.profile.nodes.some((n) => n.callFrame.scriptId === '1'));
  for (const p of noJs)
    warnings.push(
      `pid ${p.pid} (${p.comm}) has no JS frames: run node with --perf-basic-prof-only-functions (and --interpreted-frames-native-stack) so perf can name them; keep /tmp/perf-${p.pid}.map until perf script has run`,
    );
  const written = await writeProfileRunDir({
    out: resolve(options.cwd, options.out ?? '.hotpath'),
    name: ['import', basename(file)],
    command: ['hotpath', 'import', path],
    cwd: appDirectory(
      chosen.map((p) => p.profile),
      options.cwd,
    ),
    options: { import: path, events: parsed.events },
    warnings,
    // perf's clock is not the epoch: the window is placed to end at import time.
    profiles: chosen.map((p) => ({
      pid: p.pid,
      profile: p.profile,
      start: Date.now() - (p.lastTime - p.firstTime) * 1000,
      end: Date.now(),
    })),
  });
  return { ...written, processes: chosen.map(({ profile: _p, ...rest }) => rest), warnings };
}
