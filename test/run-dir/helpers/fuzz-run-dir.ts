// Fuzzing of the run-directory readers (issue 23): a real run directory damaged at random
// (seeded): files truncated or deleted, JSON values changed to other types or removed, profile
// paths pointed outside, files replaced by links out of the directory. Each case runs
// `hotpath report --json` and `hotpath export` in process and checks the outcome: exit 0, or a
// coded error; never an uncoded error ("This is a bug in hotpath"), never a file written outside
// the case's directory, within a time bound. Shared by the CI test (a few hundred cases) and
// the long run in benchmarks/.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../../src/cli/cli.js';
import type { CliIO } from '../../../src/cli/io.js';
import { seededRandom, type Random } from '../../fixtures/telemetry/seeded-random.js';

export interface FuzzOutcome {
  seed: number;
  mutations: string[];
  command: string;
  code: number;
  ms: number;
  error?: string;
}

export interface FuzzProblem extends FuzzOutcome {
  problem: string;
}

const pick = <T>(rand: Random, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

function captureIO(cwd: string): CliIO & { err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let e = '';
  stdout.resume();
  stderr.on('data', (d) => {
    e += d;
  });
  return { stdout, stderr, env: {}, cwd, color: false, interactive: false, err: () => e };
}

/** Values of other types to put where a value was. */
function otherValue(rand: Random, was: unknown): unknown {
  const candidates: unknown[] = [null, 'x', '', -1, 0, 1e308, 3.5, true, [], {}, [1, 'a'], { a: 1 }, '../../../etc/passwd'];
  let v: unknown;
  do v = pick(rand, candidates);
  while (typeof v === typeof was && v !== null && was !== null && !Array.isArray(was));
  return v;
}

/** Every [container, key] of a JSON value, breadth first, at most `max`. */
function slots(root: unknown, max: number): [Record<string, unknown> | unknown[], string | number][] {
  const out: [Record<string, unknown> | unknown[], string | number][] = [];
  const queue: unknown[] = [root];
  while (queue.length > 0 && out.length < max) {
    const v = queue.shift();
    if (Array.isArray(v))
      v.forEach((x, i) => {
        out.push([v, i]);
        queue.push(x);
      });
    else if (typeof v === 'object' && v !== null)
      for (const [k, x] of Object.entries(v)) {
        out.push([v as Record<string, unknown>, k]);
        queue.push(x);
      }
  }
  return out;
}

/** Changes one value of a JSON document: another type, or removed. */
function mutateJson(rand: Random, value: unknown): { value: unknown; what: string } {
  const all = slots(value, 20_000);
  if (all.length === 0) return { value: otherValue(rand, value), what: 'whole value replaced' };
  // Half the time a field of the top level or just below (where readers look first).
  const shallow = all.filter(([c]) => c === value || Object.values(value as object).includes(c));
  const [container, key] = pick(rand, rand() < 0.5 && shallow.length > 0 ? shallow : all);
  if (rand() < 0.3 && !Array.isArray(container)) {
    delete (container as Record<string, unknown>)[key as string];
    return { value, what: `removed ${String(key)}` };
  }
  (container as Record<string | number, unknown>)[key] = otherValue(rand, (container as Record<string | number, unknown>)[key]);
  return { value, what: `retyped ${String(key)}` };
}

const OUTSIDE_PATHS = [
  '../../outside/secret.cpuprofile',
  '../stray.cpuprofile',
  '/etc/passwd',
  'a/../../../outside/secret.cpuprofile',
  '..',
  '',
  'sub/../cpu.cpuprofile',
  '\u0000x',
];

/** Applies 1..3 random damages to the files of `dir` (given as name → bytes). Returns what was done. */
function damage(rand: Random, dir: string, files: Map<string, Buffer>, outside: string): string[] {
  const done: string[] = [];
  const names = [...files.keys()];
  // The files readers parse most are damaged most.
  const weighted = names.flatMap((f) =>
    Array<string>(f === 'telemetry.ndjson' ? 8 : f === 'meta.json' ? 4 : /profile$/.test(f) ? 3 : f === 'load.json' ? 2 : 1).fill(f),
  );
  for (let n = 1 + Math.floor(rand() * 3); n > 0; n--) {
    const name = pick(rand, weighted);
    const text = files.get(name);
    if (!text) continue;
    const r = rand();
    if (r < 0.15) {
      files.delete(name);
      done.push(`deleted ${name}`);
    } else if (r < 0.35) {
      const at = Math.floor(rand() * text.length);
      files.set(name, text.subarray(0, at));
      done.push(`truncated ${name} at ${at}`);
    } else if (r < 0.75) {
      const s = text.toString('utf8');
      if (name.endsWith('.ndjson')) {
        const lines = s.split('\n');
        for (let k = 1 + Math.floor(rand() * 5); k > 0; k--) {
          const i = Math.floor(rand() * lines.length);
          try {
            const m = mutateJson(rand, JSON.parse(lines[i]));
            lines[i] = JSON.stringify(m.value);
            done.push(`${m.what} on line ${i + 1} of ${name}`);
          } catch {
            lines[i] = '{"v":1,"pid":1,"threadId":0,"t":1,"type":"sample"}';
            done.push(`replaced line ${i + 1} of ${name}`);
          }
        }
        files.set(name, Buffer.from(lines.join('\n')));
      } else {
        try {
          const m = mutateJson(rand, JSON.parse(s));
          files.set(name, Buffer.from(JSON.stringify(m.value) ?? 'null'));
          done.push(`${m.what} in ${name}`);
        } catch {
          files.set(name, Buffer.from(s.replace(/[{}[\]]/, '')));
          done.push(`broke the text of ${name}`);
        }
      }
    } else if (r < 0.9) {
      // A profile path edited, in meta.json or in a telemetry profile message.
      const target = pick(rand, OUTSIDE_PATHS);
      const meta = files.get('meta.json');
      if (meta && rand() < 0.5) {
        try {
          const m = JSON.parse(meta.toString('utf8')) as { profiles?: { file: unknown; kind: unknown }[] };
          // The CPU profile most of the time: the one export picks.
          const cpuEntry = Array.isArray(m.profiles) ? m.profiles.find((p) => p.kind === 'cpu') : undefined;
          if (cpuEntry && rand() < 0.7) cpuEntry.file = target;
          else if (Array.isArray(m.profiles) && m.profiles.length > 0) pick(rand, m.profiles).file = target;
          files.set('meta.json', Buffer.from(JSON.stringify(m)));
          done.push(`meta.json profile file -> ${JSON.stringify(target)}`);
        } catch {
          /* meta.json already broken */
        }
      } else {
        const t = files.get('telemetry.ndjson');
        if (t) {
          // As if the target thread announced it, so that export may pick it.
          let who = { pid: 1, threadId: 0 };
          try {
            who = JSON.parse(t.toString('utf8').split('\n')[0]) as typeof who;
          } catch {
            /* damaged already */
          }
          const msg = { v: 1, pid: who.pid, threadId: who.threadId, t: 1, type: 'profile', kind: 'cpu', file: target, start: 0, end: 1e15 };
          files.set('telemetry.ndjson', Buffer.concat([t, Buffer.from(`\n${JSON.stringify(msg)}\n`)]));
          done.push(`telemetry profile message -> ${JSON.stringify(target)}`);
        }
      }
    } else {
      files.delete(name);
      files.set(`\u0000link:${name}`, Buffer.from(join(outside, 'secret.cpuprofile')));
      done.push(`${name} -> symbolic link out of the directory`);
    }
  }
  for (const [name, bytes] of files) {
    if (name.startsWith('\u0000link:')) symlinkSync(bytes.toString(), join(dir, name.slice(6)));
    else writeFileSync(join(dir, name), bytes);
  }
  return done;
}

function digest(dir: string): string {
  const h = createHash('sha256');
  for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest('hex');
}

export interface FuzzOptions {
  /** The pristine run directory to damage (never modified). */
  source: string;
  /** Scratch directory for the cases. */
  scratch: string;
  /** Seeds to run. */
  seeds: Iterable<number>;
  /** A case slower than this is a problem (a hang shows as the test's own timeout). */
  maxCaseMs: number;
  /** Called after each case. */
  onCase?: (o: FuzzOutcome) => void;
}

/** Runs the cases and returns the problems found (none expected). */
export async function fuzzRunDir(o: FuzzOptions): Promise<FuzzProblem[]> {
  const pristine = new Map<string, Buffer>();
  for (const f of readdirSync(o.source)) if (!/^report\.|\.tmp$/.test(f)) pristine.set(f, readFileSync(join(o.source, f)));
  const cases = join(o.scratch, 'cases');
  const outside = join(o.scratch, 'outside');
  mkdirSync(cases, { recursive: true });
  mkdirSync(outside, { recursive: true });
  const cpu = [...pristine.keys()].find((f) => f.endsWith('.cpuprofile'));
  writeFileSync(join(outside, 'secret.cpuprofile'), cpu ? pristine.get(cpu)! : '{}');
  writeFileSync(join(outside, 'report.json'), 'not yours');
  const before = digest(outside);
  const problems: FuzzProblem[] = [];
  for (const seed of o.seeds) {
    const rand = seededRandom(seed);
    const dir = join(cases, `case-${seed}`);
    mkdirSync(dir);
    const mutations = damage(rand, dir, new Map(pristine), outside);
    const format = pick(rand, ['pprof', 'speedscope', 'folded', 'cpuprofile']);
    for (const args of [
      ['report', dir, '--json'],
      ['export', dir, '--format', format, ...(rand() < 0.3 ? ['--heap'] : [])],
    ]) {
      const io = captureIO(o.scratch);
      const start = performance.now();
      let code: number;
      let error: string | undefined;
      try {
        code = await runCli(args, io);
      } catch (err) {
        code = -1;
        error = `runCli threw: ${(err as Error).stack}`;
      }
      const outcome: FuzzOutcome = {
        seed,
        mutations,
        command: args[0],
        code,
        ms: Math.round(performance.now() - start),
        ...(error || code !== 0 ? { error: error ?? io.err() } : {}),
      };
      o.onCase?.(outcome);
      const problem =
        code === -1
          ? 'threw out of runCli'
          : /This is a bug in hotpath/.test(io.err())
            ? 'uncoded error'
            : code !== 0 && !/HOTPATH_ERR_[A-Z_]+/.test(io.err())
              ? 'failed without a code'
              : outcome.ms > o.maxCaseMs
                ? `took ${outcome.ms} ms`
                : undefined;
      if (problem) problems.push({ ...outcome, problem });
    }
    const strays = readdirSync(cases).filter((f) => f !== `case-${seed}`);
    if (digest(outside) !== before || strays.length > 0) {
      problems.push({
        seed,
        mutations,
        command: 'both',
        code: 0,
        ms: 0,
        problem: `wrote outside the run directory: ${strays.join(', ') || 'outside/ changed'}`,
      });
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return problems;
}
