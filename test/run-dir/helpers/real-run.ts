// A real run directory for the readers' tests: one short `hotpath run --heap` of a fixture
// server (about 4 s), made once per test process, copied for each test that damages it.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const APP = fileURLToPath(new URL('../../../../test/fixtures/apps/cjs-server.cjs', import.meta.url));

let made: string | undefined;

/** The path of a pristine run directory (do not modify it: copy it with copyRun). */
export function realRunDir(base: string): string {
  if (made) return made;
  const out = join(base, 'runs');
  const r = spawnSync(process.execPath, [CLI, 'run', '-d', '1', '-c', '2', '-w', '1', '--heap', '-o', out, '--', process.execPath, APP], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (r.status !== 0) throw new Error(`hotpath run failed (${r.status}): ${r.stderr}`);
  made = join(out, readdirSync(out)[0]);
  return made;
}

/** A fresh copy of the real run directory under `base`. */
export function copyRun(base: string, name: string): string {
  const src = realRunDir(base);
  const dir = mkdtempSync(join(base, `${name}-`));
  cpSync(src, dir, { recursive: true });
  return dir;
}

export const tempBase = (): string => mkdtempSync(join(tmpdir(), 'hotpath-readers-'));
