// `hotpath run` and `hotpath report` at the edges: bad input refused before anything starts,
// --port among several servers, --url without an agent, a target that ignores SIGTERM,
// a second Ctrl-C, and re-reading a run directory with `hotpath report`.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readRunDir } from '../../src/profile/read-run.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

function out() {
  const tmp = tempOut();
  after(tmp.cleanup);
  return tmp.out;
}

describe('hotpath run: bad input is refused before anything starts', () => {
  const cases: [string, string[], number, RegExp][] = [
    ['no command', ['run', '-d', '1'], 2, /HOTPATH_ERR_MISSING_ARGUMENT/],
    ['a command without --', ['run', 'node', 'app.js'], 2, /after `--`/],
    ['--cpu-interval below 100 µs', ['run', '--cpu-interval', '50', '--', 'node', 'x.js'], 2, /--cpu-interval must be between 100 and/],
    ['--url and a command', ['run', '--url', 'http://127.0.0.1:1/', '--', 'node', 'x.js'], 2, /either --url or a command/],
    // Bad input, exit 2 like every bad flag (issue 23.10, docs/errors.md).
    ['an unreadable --setup file', ['run', '--setup', 'nope.json', '--', 'node', 'x.js'], 2, /HOTPATH_ERR_SCENARIO/],
  ];
  for (const [name, args, code, message] of cases) {
    test(name, async () => {
      const dir = out();
      const r = await runCli([...args.slice(0, 1), '--out', dir, ...args.slice(1)], { cwd: apps });
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, message);
      assert.deepEqual(readdirSync(dir), [], 'no run directory is created');
    });
  }

  test('a command that does not exist: HOTPATH_ERR_SPAWN, and the run directory says so', async () => {
    const dir = out();
    const r = await runCli(['run', '--out', dir, '--', 'no-such-command-hotpath'], { cwd: apps });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HOTPATH_ERR_SPAWN.*command not found/);
    assert.equal(readMeta(onlyRunDir(dir)).outcome.code, 'HOTPATH_ERR_SPAWN');
  });

  test('a program that never loads the agent: the timeout says so', async () => {
    const dir = out();
    const r = await runCli(['run', '--ready-timeout', '1', '--out', dir, '--', 'sleep', '30'], { cwd: apps });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HOTPATH_ERR_READY_TIMEOUT.*no process loaded the hotpath agent/);
    assert.deepEqual(survivors(readMeta(onlyRunDir(dir))), []);
  });
});

describe('hotpath run: choosing and reaching the server', () => {
  test('several ports: the first HTTP server is driven, the others are listed', async () => {
    const first = out();
    const r1 = await runCli(['run', '-d', '0.5', '-c', '2', '-w', '1', '--out', first, '--', 'node', 'two-ports.cjs'], { cwd: apps });
    assert.equal(r1.code, 0, r1.stderr);
    const dir1 = onlyRunDir(first);
    const [, admin, main] = /ports admin=(\d+) main=(\d+)/.exec(readFileSync(join(dir1, 'target.log'), 'utf8')) ?? [];
    const meta1 = readMeta(dir1);
    assert.equal(meta1.target?.port, Number(admin));
    assert.deepEqual(meta1.otherPorts, [Number(main)]);
    // The user is told where the load went and how to drive the other server.
    const told = `the target also listened on port ${main}; the load went to port ${admin}, the first HTTP server the app opened. Pass --port ${main} to drive that one`;
    assert.ok(r1.stderr.includes(told), r1.stderr);
    assert.ok(meta1.warnings?.includes(told), JSON.stringify(meta1.warnings));
  });

  test('--port picks the server on that port, even when it opens second', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const free = (probe.address() as AddressInfo).port;
    await new Promise((done) => probe.close(done));
    const dir = out();
    const r = await runCli(
      ['run', '-d', '0.5', '-c', '2', '-w', '1', '--port', String(free), '--out', dir, '--', 'node', 'two-ports.cjs'],
      { cwd: apps, env: { MAIN_PORT: String(free) } },
    );
    assert.equal(r.code, 0, r.stderr);
    const meta = readMeta(onlyRunDir(dir));
    assert.equal(meta.target?.port, free);
    assert.equal(meta.otherPorts?.length, 1, 'the admin port is listed');
    assert.ok(!r.stderr.includes('also listened on'), 'no advice to pass --port when it was passed');
  });

  test('a server on a Unix socket is driven through the socket', async () => {
    const dir = out();
    const socket = join(dir, 'app.sock');
    const r = await runCli(
      [
        'run',
        '-d',
        '0.5',
        '-c',
        '2',
        '-w',
        '1',
        '--path',
        '/unix-path',
        '--out',
        join(dir, 'runs'),
        '--',
        'node',
        'unix-socket-server.cjs',
      ],
      { cwd: apps, env: { SOCKET_PATH: socket } },
    );
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunDir(onlyRunDir(join(dir, 'runs')));
    assert.ok(r.stderr.includes(`listens on ${socket}`), r.stderr);
    assert.ok(run.load && run.load.requests.total > 0 && run.load.errors.total === 0);
    assert.equal(run.load.statusCodes['200'], run.load.requests.total);
  });

  test('--setup requests go first, then warm-up, then the measured load with the profile', async () => {
    const dir = out();
    const r = await runCli(
      ['run', '--setup', 'setup.json', '--warmup', '0.5', '-d', '0.5', '-c', '2', '-w', '1', '--out', dir, '--', 'node', 'needs-setup.cjs'],
      { cwd: apps },
    );
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunDir(onlyRunDir(dir));
    assert.deepEqual(
      run.meta.phases.map((p) => p.phase),
      ['starting', 'setup', 'warmup', 'load', 'cooldown', 'stopping'],
    );
    assert.ok(run.load && run.load.requests.total > 0);
    assert.deepEqual(Object.keys(run.load.statusCodes), ['200'], 'every measured request came after the setup');
    const load = run.meta.phases.find((p) => p.phase === 'load');
    const cpu = run.profiles.find((p) => p.kind === 'cpu');
    assert.ok(load && cpu && cpu.start >= load.start - 50, 'the profile leaves the warm-up out');
  });

  test('--url drives a running server without an agent (outside view)', async () => {
    let served = 0;
    const srv = createServer((req, res) => {
      served++;
      res.end('outside\n');
    }).listen(0, '127.0.0.1');
    await once(srv, 'listening');
    after(() => srv.close());
    const dir = out();
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
    const r = await runCli(['run', '-d', '0.5', '-c', '2', '-w', '1', '--url', url, '--out', dir], { cwd: apps });
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunDir(onlyRunDir(dir));
    assert.equal(run.meta.target?.url, url);
    assert.equal(run.threads.length, 0, 'no agent, no telemetry');
    assert.ok(run.load && run.load.requests.total > 0 && served >= run.load.requests.total);
  });
});

describe('hotpath run: stopping', () => {
  test('a target that ignores SIGTERM is killed after --grace', async () => {
    const dir = out();
    const r = await runCli(
      ['run', '-d', '0.5', '-c', '2', '-w', '1', '--grace', '0.5', '--out', dir, '--', 'node', 'ignores-sigterm.cjs'],
      { cwd: apps },
    );
    assert.equal(r.code, 0, r.stderr);
    const meta = readMeta(onlyRunDir(dir));
    assert.equal(meta.outcome.signal, 'SIGKILL');
    assert.ok(meta.warnings?.some((w) => /--grace/.test(w)));
    assert.deepEqual(survivors(meta), []);
  });

  test('a second Ctrl-C kills the target group at once and exits 130', async () => {
    const dir = out();
    const r = await runCli(['run', '-d', '30', '-c', '2', '-w', '1', '--grace', '20', '--out', dir, '--', 'node', 'ignores-sigterm.cjs'], {
      cwd: apps,
      onSpawn: (child, waitFor) =>
        void waitFor('hotpath: load:').then(() => {
          child.kill('SIGINT');
          // The first Ctrl-C leads to SIGTERM, which this target ignores for --grace 20 s.
          void waitFor('stopping').then(() => setTimeout(() => child.kill('SIGINT'), 1500));
        }),
    });
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /killing the target now/);
    const meta = readMeta(onlyRunDir(dir));
    assert.equal(meta.outcome.status, 'interrupted');
    assert.deepEqual(survivors(meta), []);
  });
});

describe('hotpath report', () => {
  test('re-reads a run directory, rewrites its reports and prints report.json with --json', async () => {
    const dir = out();
    const r = await runCli(['run', '-d', '0.5', '-c', '2', '-w', '1', '--out', dir, '--', 'node', 'cjs-server.cjs'], { cwd: apps });
    assert.equal(r.code, 0, r.stderr);
    const runDir = onlyRunDir(dir);
    rmSync(join(runDir, 'report.json'));
    const rep = await runCli(['report', '--json', runDir]);
    assert.equal(rep.code, 0, rep.stderr);
    const report = JSON.parse(rep.stdout) as { runDir: string; load: { requests: { total: number } } };
    assert.equal(report.runDir, runDir);
    assert.ok(report.load.requests.total > 0);
    assert.ok(existsSync(join(runDir, 'report.json')));
    assert.match(rep.stderr, /run directory: /);
  });

  test('a path that is not a run directory: HOTPATH_ERR_RUN_DIR; no path: usage', async () => {
    const r = await runCli(['report', apps]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HOTPATH_ERR_RUN_DIR/);
    const r2 = await runCli(['report']);
    assert.equal(r2.code, 2);
  });
});
