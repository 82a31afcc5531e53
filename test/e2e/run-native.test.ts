// `hotpath run --native`: Linux perf records the target during the load and its samples become
// the main thread's CPU profile, kernel, libuv, V8 C++ and JS frames in one stack; where perf is
// missing or refused the run goes on and says so once, with the fix; the perf maps the target
// wrote (/tmp/perf-<pid>.map) are gone after the run on every path.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/index.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import type { RunMeta } from '../../src/run-dir/schema.js';
import { apps, survivors, tempOut } from '../run/helpers/run-cli.js';
import { perfSkipReason } from './helpers/perf.js';
import { readRunDir } from '../../src/profile/read-run.js';
import { cpuViewOf } from '../../src/analyze/signals/cpu-view.js';
import { hotLine } from '../../src/profile/hot-line.js';
import { ownCodeWeight } from '../../src/profile/engine-frames.js';
import { BLOCKING_HOT_LINE_OWN_SHARE } from '../../src/analyze/event-loop-blocking.js';

const zlibServer = join(apps, 'zlib-server.cjs');
const skip = perfSkipReason();

/** Every pid that may have written a perf map during the run. */
function runPids(meta: RunMeta): number[] {
  return [...new Set([meta.spawnedPid, ...meta.processes.map((p) => p.pid)].filter((p): p is number => typeof p === 'number'))];
}

function assertNoMaps(meta: RunMeta): void {
  const left = runPids(meta).filter((pid) => existsSync(`/tmp/perf-${pid}.map`));
  assert.deepEqual(left, [], `perf maps left behind: ${left.map((p) => `/tmp/perf-${p}.map`).join(', ')}`);
}

/** Self samples of the nodes matching `leaf`, and of those with an ancestor matching `caller`. */
function under(
  profile: CpuProfile,
  leaf: (name: string) => boolean,
  caller: (name: string, url: string) => boolean,
): { all: number; underCaller: number; active: number } {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map<number, number>();
  for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  let all = 0;
  let underCaller = 0;
  let active = 0;
  for (const [id, h] of hits) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName !== '(idle)') active += h;
    if (!leaf(n.callFrame.functionName)) continue;
    all += h;
    for (let p = parent.get(id); p !== undefined; p = parent.get(p)) {
      const f = byId.get(p)!.callFrame;
      if (caller(f.functionName, f.url)) {
        underCaller += h;
        break;
      }
    }
  }
  return { all, underCaller, active };
}

test(
  "run --native: a server whose time is in zlib shows zlib's C frames under its JS caller, and leaves no perf map",
  { skip, timeout: 120_000 },
  async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const statuses: string[] = [];
    const result = await run(
      { command: ['node', zlibServer], duration: 3, connections: 2, workers: 1, out: tmp.out, native: true },
      { onStatus: watchMap(statuses) },
    );
    assert.equal(result.meta.outcome.status, 'completed');
    assert.deepEqual(survivors(result.meta), []);
    assert.ok(
      !(result.meta.warnings ?? []).some((w) => w.includes('HOTPATH_ERR_NATIVE_UNAVAILABLE')),
      (result.meta.warnings ?? []).join('\n'),
    );
    const pid = result.meta.target!.pid!;
    const native = JSON.parse(readFileSync(join(result.runDir, 'native.json'), 'utf8')) as {
      processes: { pid: number; mainThreadSamples: number; jsSamples: number }[];
    };
    const proc = native.processes.find((p) => p.pid === pid)!;
    assert.ok(proc.mainThreadSamples > 100, `perf sampled the main thread ${proc.mainThreadSamples} times`);
    // The run's CPU profile of the main thread is perf's; the inspector's is kept beside it.
    const entry = result.meta.profiles.find((p) => p.kind === 'cpu' && p.pid === pid && p.threadId === 0)!;
    assert.ok(existsSync(join(result.runDir, entry.file.replace(/\.cpuprofile$/, '.inspector.cpuprofile'))));
    const profile = JSON.parse(readFileSync(join(result.runDir, entry.file), 'utf8')) as CpuProfile;
    const zlibC = (name: string) =>
      /^(deflate|longest_match|compress_block|fill_window|crc32|adler32|_tr_|send_bits|build_tree|pqdownheap)|ZlibContext/.test(name);
    // Under the server's own JS: compressBody, or the request handler where V8 inlined compressBody
    // into it (on Node 24 about half the samples: perf's map names optimized code by its outer
    // function, and the inspector's sample of the same moment gives the callee back when it agrees).
    const s = under(profile, zlibC, (_name, url) => url.endsWith('zlib-server.cjs'));
    const named = under(profile, zlibC, (name, url) => name === 'compressBody' && url.endsWith('zlib-server.cjs'));
    const fromInspector = (native.processes.find((p) => p.pid === pid) as { fromInspector?: { matched: number; inlined: number } })
      .fromInspector;
    const seen = `${named.underCaller} of ${s.all} zlib samples under compressBody, ${s.underCaller} under the server's JS; inspector ${JSON.stringify(fromInspector)}`;
    // Shares, not speeds: most of the thread's running time is deflate, nearly all of it under the server's JS.
    assert.ok(s.all / s.active > 0.3, `zlib's C frames hold ${s.all} of ${s.active} running samples`);
    assert.ok(s.underCaller / s.all > 0.9, seen);
    // compressBody itself is named for many of them (not inlined, or given back by the inspector).
    // One CI run on Node 24 had 52 %, 2 of 10 runs here: perf named the handler's optimized code by
    // stale map entries it overlaps, so no inspector sample agreed (perf-map.ts fixes the names).
    // Where the inspector's samples are sparse and the thread starved, agreement is rarer: above a
    // third, with the counts in the message.
    assert.ok(named.underCaller / s.all > 0.33, seen);
    assert.ok(fromInspector && fromInspector.matched > proc.jsSamples / 2, seen);
    // One stack from the loop to the kernel: libuv's loop and kernel frames are there too.
    const names = new Set(profile.nodes.map((n) => n.callFrame.functionName));
    assert.ok(names.has('uv_run'), "libuv's uv_run frame");
    assert.ok(
      [...names].some((n) => n.endsWith(' [kernel]')),
      'kernel frames',
    );
    // The report is written from it and names the zlib work.
    assert.ok(result.report);
    assert.ok(statuses.filter((m) => m.startsWith('native:')).length === 1, statuses.join('\n'));
    assert.ok(statuses.includes('map seen during the load'), 'the target wrote its perf map');
    assertNoMaps(result.meta);
    assert.ok(!existsSync(join(result.runDir, 'perf.data')), 'perf.data is removed once read');
  },
);

test(
  "run --native: a culprit whose time is its own loop keeps its hot line (perf has no lines: the inspector's of the same moment)",
  { skip, timeout: 120_000 },
  async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const result = await run({
      command: ['node', join(apps, 'checksum-server.cjs')],
      duration: 3,
      connections: 2,
      workers: 1,
      out: tmp.out,
      native: true,
    });
    assert.equal(result.meta.outcome.status, 'completed');
    assertNoMaps(result.meta);
    // The run's CPU view (what the culprit's hot line is read from): checksum's hottest line is
    // its inner loop (line 10), and its own code is most of its time.
    const data = await readRunDir(result.runDir);
    const view = cpuViewOf(data)!;
    const fn = view.functions.find((f) => f.frame.name === 'checksum');
    assert.ok(fn, JSON.stringify(view.functions.slice(0, 3).map((f) => f.frame.name)));
    assert.equal(hotLine(view.tree, fn.frameIndex)?.line, 10);
    assert.ok(ownCodeWeight(view.tree, fn.frameIndex) / fn.selfUs >= BLOCKING_HOT_LINE_OWN_SHARE);
    // A blocking finding (the loop busy enough: on a loaded machine the load generator may not
    // keep it so) tells that line.
    const found = result.report!.findings.find((f) => f.code === 'HOTPATH_EVENT_LOOP_BLOCKING');
    if (found) assert.equal(found.evidence.hotLine, 10, JSON.stringify(found.evidence));
  },
);

test(
  "run --native on a cluster: every worker's main thread is recorded (also one that listens late), and the diagnosis reads a worker's",
  { skip, timeout: 120_000 },
  async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const result = await run({
      command: ['node', join(apps, 'cluster-checksum-server.cjs')],
      duration: 3,
      connections: 4,
      workers: 1,
      out: tmp.out,
      native: true,
    });
    assert.equal(result.meta.outcome.status, 'completed');
    assert.deepEqual(survivors(result.meta), []);
    assertNoMaps(result.meta);
    const workers = result.meta.processes.filter((p) => p.threadId === 0 && p.clusterWorkerId !== undefined).map((p) => p.pid);
    assert.equal(workers.length, 2, JSON.stringify(result.meta.processes));
    const native = JSON.parse(readFileSync(join(result.runDir, 'native.json'), 'utf8')) as {
      processes: { pid: number; mainThreadSamples: number; jsSamples: number; profile?: string }[];
    };
    for (const pid of workers) {
      const p = native.processes.find((x) => x.pid === pid);
      assert.ok(p && p.mainThreadSamples > 0 && p.jsSamples > 0, `worker ${pid}: ${JSON.stringify(native.processes)}`);
      // Its CPU profile is perf's (one stack down from libuv), the inspector's kept beside it.
      const profile = JSON.parse(readFileSync(join(result.runDir, p.profile!), 'utf8')) as CpuProfile;
      assert.ok(profile.nodes.some((n) => n.callFrame.functionName === 'uv_run'));
      assert.ok(existsSync(join(result.runDir, p.profile!.replace(/\.cpuprofile$/, '.inspector.cpuprofile'))));
    }
    // The diagnosis reads a worker (never the primary): the worker's code carries the time, and
    // checksum is among its top two. (On Node 24 one worker's optimized handler sometimes inlines
    // checksum and perf names that code by the handler; the inspector's samples give the callee
    // back only where they agree with perf's in time, which was about half of that worker's
    // samples in some runs: then the handler and checksum share the time.) On a starved machine
    // the loop may read too idle for a blocking finding; when there is one, it names checksum.
    const report = result.report!;
    const top = JSON.stringify(report.hotspots.slice(0, 3));
    assert.match(report.hotspots[0]?.file ?? '', /cluster-checksum-server\.cjs$/, top);
    assert.ok(
      report.hotspots.slice(0, 2).some((h) => h.function === 'checksum'),
      top,
    );
    const blocking = report.findings.find((f) => f.code === 'HOTPATH_EVENT_LOOP_BLOCKING');
    // checksum, or the handler whose optimized code perf named for it (see above).
    if (blocking)
      assert.ok(['checksum', ...report.hotspots.slice(0, 1).map((h) => h.function)].includes(blocking.culprit?.function ?? ''), top);
  },
);

test('run --native: aborted during the load (Ctrl-C), the perf maps are still removed', { skip, timeout: 120_000 }, async () => {
  const tmp = tempOut();
  after(tmp.cleanup);
  const controller = new AbortController();
  const result = await run(
    { command: ['node', zlibServer], duration: 30, connections: 2, workers: 1, out: tmp.out, native: true },
    {
      signal: controller.signal,
      onStatus: (m) => {
        if (m.startsWith('load:')) setTimeout(() => controller.abort(), 1000);
      },
    },
  );
  assert.equal(result.meta.outcome.status, 'interrupted');
  assertNoMaps(result.meta);
  assert.deepEqual(survivors(result.meta), []);
});

/** A PATH holding only node and, when given, a fake perf script: never the real perf. */
function fakePath(perfScript?: string): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-fake-perf-'));
  symlinkSync(process.execPath, join(dir, 'node'));
  if (perfScript !== undefined) {
    writeFileSync(join(dir, 'perf'), perfScript);
    chmodSync(join(dir, 'perf'), 0o755);
  }
  return { path: dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The target's perf map exists when the load starts (the status line names the pid first). */
function watchMap(statuses: string[]): (m: string) => void {
  let pid: number | undefined;
  return (m) => {
    statuses.push(m);
    pid ??= Number(/^pid (\d+) listens/.exec(m)?.[1]) || undefined;
    if (m.startsWith('load:') && pid !== undefined && existsSync(`/tmp/perf-${pid}.map`)) statuses.push('map seen during the load');
  };
}

async function runWithPath(path: string): Promise<{ meta: RunMeta; statuses: string[]; runDir: string }> {
  const tmp = tempOut();
  after(tmp.cleanup);
  const statuses: string[] = [];
  const result = await run(
    { command: ['node', zlibServer], duration: 1, connections: 1, workers: 1, out: tmp.out, native: true },
    {
      env: { ...process.env, PATH: path },
      onStatus: watchMap(statuses),
    },
  );
  assert.deepEqual(survivors(result.meta), []);
  return { meta: result.meta, statuses, runDir: result.runDir };
}

test(
  'run --native without perf on PATH: the run goes on without native frames and says so once, with the fix',
  { timeout: 60_000 },
  async () => {
    const p = fakePath();
    after(p.cleanup);
    const { meta, statuses } = await runWithPath(p.path);
    assert.equal(meta.outcome.status, 'completed');
    const warnings = (meta.warnings ?? []).filter((w) => w.includes('HOTPATH_ERR_NATIVE_UNAVAILABLE'));
    assert.equal(warnings.length, 1, (meta.warnings ?? []).join('\n'));
    assert.match(warnings[0], /perf is not installed .*Fix: install it/);
    assert.equal(statuses.filter((m) => m.includes('HOTPATH_ERR_NATIVE_UNAVAILABLE')).length, 1);
    // The inspector's profile is the run's, as without --native; no map was asked for.
    assert.ok(meta.profiles.some((e) => e.kind === 'cpu' && e.pid === meta.target?.pid));
    assert.ok(!statuses.includes('map seen during the load'), 'without perf the target runs without the perf map flags');
    assertNoMaps(meta);
  },
);

test(
  'run --native where perf is refused (perf_event_paranoid): the run goes on, warns once with the fix, and removes the maps',
  { timeout: 60_000 },
  async () => {
    const p = fakePath(
      [
        '#!/bin/sh',
        'echo "Error:" >&2',
        'echo "Access to performance monitoring and observability operations is limited." >&2',
        'echo "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open" >&2',
        'echo "access to performance monitoring and observability operations for processes" >&2',
        'echo "without CAP_PERFMON, CAP_SYS_PTRACE or CAP_SYS_ADMIN Linux capability." >&2',
        'exit 255',
        '',
      ].join('\n'),
    );
    after(p.cleanup);
    const { meta, statuses, runDir } = await runWithPath(p.path);
    assert.equal(meta.outcome.status, 'completed');
    const warnings = (meta.warnings ?? []).filter((w) => w.includes('HOTPATH_ERR_NATIVE_UNAVAILABLE'));
    assert.equal(warnings.length, 1, (meta.warnings ?? []).join('\n'));
    assert.ok(!existsSync(join(runDir, 'native.json')));
    assert.match(warnings[0], /not permitted .*perf_event_paranoid.*Fix: allow it: `sudo sysctl -w kernel\.perf_event_paranoid=1`/);
    assert.equal(statuses.filter((m) => m.includes('HOTPATH_ERR_NATIVE_UNAVAILABLE')).length, 1);
    // The target ran with the perf map flags (perf was there to ask): its map is removed all the same.
    assert.ok(statuses.includes('map seen during the load'), 'the target wrote its perf map');
    assertNoMaps(meta);
    assert.ok(meta.profiles.some((e) => e.kind === 'cpu' && e.pid === meta.target?.pid));
  },
);

test(
  'run --native: many small res.write calls per response are named from the native write path, which the inspector alone cannot see',
  { skip, timeout: 120_000 },
  async () => {
    const server = join(apps, 'small-writes-server.cjs');
    const tmp = tempOut();
    after(tmp.cleanup);
    const native = await run({ command: ['node', server], duration: 3, connections: 8, workers: 1, out: tmp.out, native: true });
    assert.equal(native.meta.outcome.status, 'completed');
    const all = native.report!.findings;
    const found = all.find((f) => f.code === 'HOTPATH_SOCKET_WRITES');
    assert.ok(found, `findings: ${all.map((f) => `${f.code} ${JSON.stringify(f.evidence)}`).join('\n')}`);
    assert.match(found.culprit?.file ?? '', /small-writes-server\.cjs$/);
    assert.ok((found.evidence.writePathShare as number) >= 0.2);
    assertNoMaps(native.meta);
    // The same server without --native: the inspector's profile has no frame to tell it by.
    const plain = await run({ command: ['node', server], duration: 2, connections: 8, workers: 1, out: tmp.out });
    assert.equal(plain.meta.outcome.status, 'completed');
    assert.ok(!plain.report!.findings.some((f) => f.code === 'HOTPATH_SOCKET_WRITES'));
  },
);
