// `npm run bench`: installs the comparison tools when missing (autocannon, clinic and 0x,
// the versions benchmarks/package.json names, into ~/.cache/hotpath-bench or
// $HOTPATH_BENCH_TOOLS, outside the repository and never as its dependencies; wrk from
// Debian's package), runs every suite one after
// another and writes docs/benchmarks.md. `npm run bench -- <name>` runs the suites whose
// name contains <name> and updates only their sections.

import { execFileSync, execSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus, homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suites } from './suites.js';
import type { BenchContext } from './suite.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const benchDir = join(root, 'benchmarks');
const docPath = join(root, 'docs', 'benchmarks.md');
/** Where the comparison tools live: a cache outside the repository, shared by worktrees. */
const toolsDir = process.env.HOTPATH_BENCH_TOOLS || join(homedir(), '.cache', 'hotpath-bench');

function ensureTools(): void {
  const bin = join(toolsDir, 'node_modules', '.bin');
  if (!['autocannon', 'clinic', '0x'].every((t) => existsSync(join(bin, t)))) {
    process.stderr.write(`bench: installing autocannon, clinic and 0x into ${toolsDir}\n`);
    mkdirSync(toolsDir, { recursive: true });
    copyFileSync(join(benchDir, 'package.json'), join(toolsDir, 'package.json'));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save'], { cwd: toolsDir, stdio: 'inherit' });
  }
  try {
    execSync('command -v wrk', { stdio: 'ignore' });
  } catch {
    process.stderr.write('bench: installing wrk (Debian package)\n');
    execSync('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk', { stdio: 'inherit' });
  }
}

/**
 * The document's header. A full run states its date; a partial one (`npm run bench -- <name>`)
 * keeps the last full run's line and says which sections were measured again, and when.
 */
function header(partial: string[] | undefined): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const machine = `Node ${process.version}, ${cpus().length} × ${cpu}`;
  const today = new Date().toISOString().slice(0, 10);
  const doc = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '';
  const previous = /^Last full run: .*$/m.exec(doc)?.[0];
  // Partial runs of the same day and machine add up: every section re-run that day is named.
  const sameDay = new RegExp(`^Re-run since: (.*) on ${today}, ${machine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.$`, 'm').exec(doc)?.[1];
  const names = partial ? [...new Set([...(sameDay?.split(', ') ?? []), ...partial])] : [];
  const dates = partial
    ? [previous ?? 'Last full run: none yet.', `Re-run since: ${names.join(', ')} on ${today}, ${machine}.`]
    : [`Last full run: ${today}, ${machine}.`];
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench`. Every table compares side by side in one run on the same machine',
    '(ratios, not lone figures), because these machines are shared and noisy. Target and load',
    'generator are pinned to different cores with `taskset` where the suite says so.',
    '',
    ...dates,
    '',
  ].join('\n');
}

/** Splits the existing document into sections by `## ` heading, to update some of them. */
function existingSections(): Map<string, string> {
  const map = new Map<string, string>();
  if (!existsSync(docPath)) return map;
  const text = readFileSync(docPath, 'utf8');
  for (const part of text.split(/^(?=## )/m).slice(1)) {
    map.set(part.split('\n')[0].slice(3).trim(), part.trimEnd() + '\n');
  }
  return map;
}

async function main(): Promise<void> {
  const filter = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  // A suite's exact name picks that suite alone (`prof` is not also `profile`); otherwise a part of names.
  const picks = (name: string, f: string) => (suites.some((x) => x.name === f) ? name === f : name.includes(f));
  const chosen = suites.filter((s) => filter.length === 0 || filter.some((f) => picks(s.name, f)));
  if (chosen.length === 0) throw new Error(`no benchmark suite matches ${filter.join(', ')}`);
  ensureTools();
  const scratch = mkdtempSync(join(tmpdir(), 'hotpath-bench-'));
  const ctx: BenchContext = {
    root,
    scratch,
    toolsBin: join(toolsDir, 'node_modules', '.bin'),
    quick: process.env.HOTPATH_BENCH_QUICK === '1',
    log: (m) => process.stderr.write(`bench: ${m}\n`),
  };
  const sections = existingSections();
  try {
    for (const suite of chosen) {
      ctx.log(`suite ${suite.name}`);
      const md = await suite.run(ctx);
      const title = md.split('\n')[0].replace(/^## /, '').trim();
      sections.set(title, md.trimEnd() + '\n');
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const order = suites.map((s) => s.name);
  const body = [...sections.entries()]
    .sort(([a], [b]) => rank(order, a) - rank(order, b))
    .map(([, md]) => md)
    .join('\n');
  writeFileSync(docPath, `${header(chosen.length === suites.length ? undefined : chosen.map((s) => s.name))}\n${body}`);
  ctx.log(`wrote ${docPath}`);
}

function rank(order: string[], title: string): number {
  const i = order.findIndex((n) => title.toLowerCase().includes(n.toLowerCase()));
  return i === -1 ? order.length : i;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
