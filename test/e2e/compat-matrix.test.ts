// The compatibility matrix (docs/compatibility.md): one hotpath run per framework app of
// test/fixtures/compat, each started the way its row says (node, npm/pnpm/yarn start, tsx, node
// --import, Node's type stripping, a cluster primary, a watcher or process manager whose child
// serves, the user's own NODE_OPTIONS and env file) on the host's Node or on another major's binary.
// A faulty app (its login route calls hashPassword in lib/password.js, a pbkdf2Sync) must get
// the sync-io finding naming hashPassword at its line, with no agent error in any process; a
// healthy control (the same app with COMPAT_MODE=healthy) must be healthy. The table in
// docs/compatibility.md must list exactly the rows these cases make.
// Runs use the programmatic run() (no CLI start-up per run) with a 2 s load. HOTPATH_BUSY=1
// (npm run test:busy) runs every case beside a CPU hog: the same verdicts, healthy included.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { run } from '../../src/index.js';
import { readRunDir } from '../../src/profile/read-run.js';
import type { Report } from '../../src/report/report-schema.js';
import { root, survivors, tempOut } from '../run/helpers/run-cli.js';
import { checkDiagnosis, findingsSummary } from './helpers/diagnosis.js';
import { busyMachine, startCpuHog } from './helpers/cpu-hog.js';
import {
  COMPAT_DIR,
  docRowsOf,
  installedPackage,
  matrixCases,
  nodeBinary,
  parseCompatTable,
  renderCompatTable,
  type MatrixCase,
} from './helpers/compat-cases.js';

const hostMajor = Number(process.versions.node.split('.')[0]);

const bin = (name: string) => join(root, 'node_modules', '.bin', name);
/** The user's own NODE_OPTIONS (the `user NODE_OPTIONS` launcher): hotpath's --require goes before them. */
const USER_NODE_OPTIONS = '--max-old-space-size=512 --enable-source-maps --require ./user-preload.cjs';

/** The command that starts the case's app (and what it adds to the environment), or why it cannot run here. */
function commandOf(c: MatrixCase): { command: string[]; env?: NodeJS.ProcessEnv; skip?: undefined } | { skip: string } {
  const major = c.node ?? hostMajor;
  const node = nodeBinary(major);
  if (node === undefined) return { skip: `no Node ${major} binary (host ${process.version}, /opt/hotpath-nodes/${major})` };
  switch (c.launcher) {
    case 'node':
    case 'cluster primary':
      return { command: [node, c.app] };
    case 'node --import':
      return { command: [node, '--import', './preload.mjs', c.app] };
    case 'npm start':
      return { command: ['npm', 'start'] };
    case 'pnpm start':
    case 'yarn start':
      return { command: [bin(c.launcher.split(' ')[0]), 'start'] };
    case 'nodemon':
      return { command: [bin('nodemon'), c.app] };
    case 'node --watch':
      return { command: [node, '--watch', c.app] };
    case 'pm2-runtime':
      // pm2 keeps its state (logs, pid files) in PM2_HOME, ~/.pm2 by default: the test's own.
      return { command: [bin('pm2-runtime'), c.app], env: { PM2_HOME: join(out.out, 'pm2') } };
    case 'user NODE_OPTIONS':
      return {
        command: [node, '--env-file=compat.env', c.app],
        env: { NODE_OPTIONS: USER_NODE_OPTIONS, COMPAT_USER_OPTIONS: 'node-options' },
      };
    case 'node --env-file':
      // No NODE_OPTIONS in the environment: options.env's apply (src/run/env-file-options.ts).
      return { command: [node, '--env-file=options.env', c.app], env: { NODE_OPTIONS: undefined, COMPAT_USER_OPTIONS: 'env-file' } };
    case 'tsx':
      return { command: [bin('tsx'), c.app] };
    case 'type stripping':
      // Node 22 strips types behind a flag (unflagged from 22.18), 23.6+ without one; 20 cannot.
      if (major < 22) return { skip: `Node ${major} has no type stripping` };
      return { command: [node, ...(major === 22 ? ['--experimental-strip-types'] : []), c.app] };
  }
}

/** The line of `hashPassword`'s pbkdf2Sync call in the culprit file. */
function culpritLine(file: string): number {
  return (
    readFileSync(join(COMPAT_DIR, file), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes('pbkdf2Sync(')) + 1
  );
}

const out = tempOut();
after(out.cleanup);
// HOTPATH_BUSY=1: every case runs beside one spinning process per core, and the verdicts must not
// change (a healthy control stays healthy): a slow run of its own, not part of every CI run.
const hog = busyMachine ? startCpuHog() : undefined;
if (hog) console.log(`# busy machine: ${hog.processes} spinning processes beside every case`);
after(() => hog?.stop());

describe('the compatibility matrix', () => {
  test('docs/compatibility.md lists exactly the rows the matrix runs', () => {
    const doc = parseCompatTable(readFileSync(join(root, 'docs', 'compatibility.md'), 'utf8'));
    const rows = docRowsOf(matrixCases);
    assert.deepEqual(doc, rows, `the table the cases make:\n${renderCompatTable(rows)}`);
  });

  test('every package of the matrix is installed at the major its row names', () => {
    for (const c of matrixCases) {
      for (const p of c.packages) {
        const found = installedPackage(p.as ?? p.name, c.app);
        assert.equal(found?.name, p.name, `${p.as ?? p.name} for ${c.app}`);
        assert.ok(found.version.startsWith(`${p.major}.`), `${p.name} ${found.version} for ${c.app} is not ${p.major}`);
      }
    }
  });

  test('the README links the compatibility table', () => {
    assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /\(docs\/compatibility\.md\)/);
  });

  for (const c of matrixCases) {
    const how = commandOf(c);
    const where = c.node === undefined ? "the host's Node" : `Node ${c.node}`;
    const name = `${c.framework} ${c.version} (${c.app}, ${c.launcher}, ${where}): ${c.healthy ? 'healthy' : 'sync-io in hashPassword'}`;
    test(name, { skip: 'skip' in how ? how.skip : false, timeout: 120_000 }, async () => {
      assert.ok('command' in how);
      const node = nodeBinary(c.node ?? hostMajor)!;
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        // The launcher's own `node` (npm's script, tsx's shebang) is the case's.
        PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
        COMPAT_MODE: c.healthy ? 'healthy' : 'faulty',
        ...how.env,
      };
      delete env.PORT;
      for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
      const result = await run(
        { command: how.command, duration: 2, connections: 8, workers: 1, path: '/login?user=ada', out: out.out },
        { cwd: COMPAT_DIR, env },
      );
      const report = result.report as Report;
      assert.ok(report, `no report: ${String(result.reportError)}`);
      const stderr = (result.meta.outcome.stderrTail ?? []).join('\n');
      assert.equal(report.target.outcome.status, 'completed', stderr);
      const data = await readRunDir(result.runDir);
      const errors = data.threads.flatMap((t) => t.agentErrors.map((e) => `${t.pid}/${t.threadId} ${e.what}: ${e.message}`));
      assert.deepEqual(errors, [], 'no agent error in any process');
      assert.ok(result.load && result.load.requests.total > 0 && result.load.errors.total === 0, JSON.stringify(result.load?.errors));
      assert.deepEqual(Object.keys(result.load.statusCodes), ['200'], 'the login route answered');
      // A cluster's workers serve (its primary is recorded as well: issue 17, item 3).
      const servers = result.meta.processes.filter(
        (p) => p.isTarget && (c.launcher !== 'cluster primary' || p.clusterWorkerId !== undefined),
      );
      assert.ok(servers.length >= 1, 'a listening process was recorded');
      assert.match(result.meta.nodeVersion ?? '', new RegExp(`^v${c.node ?? hostMajor}\\.`));
      for (const p of servers) {
        const thread = data.threads.find((x) => x.pid === p.pid && x.threadId === p.threadId);
        assert.ok(thread && thread.samples.length > 0, `target ${p.pid} sent telemetry`);
      }
      assert.ok(
        data.profiles.some((f) => f.kind === 'cpu' && servers.some((p) => p.pid === f.pid)),
        'a CPU profile of a target',
      );
      if (c.launcher === 'cluster primary') assert.equal(servers.length, 2, 'both cluster workers serve');
      assert.deepEqual(survivors(result.meta), [], 'no process outlives the run');
      // Probing the framework printed nothing (Express 4's app.router getter prints a deprecation).
      assert.doesNotMatch(readFileSync(join(result.runDir, 'target.log'), 'utf8'), /deprecat/i);

      const main = checkDiagnosis(report, stderr, c.healthy === true);
      if (main === undefined) return;
      const summary = findingsSummary(report);
      assert.equal(main.category, 'sync-io', summary);
      assert.equal(main.culprit?.function, 'hashPassword', summary);
      assert.equal(main.culprit?.file, c.culpritFile, summary);
      assert.equal(main.culprit?.line, culpritLine(c.culpritFile), summary);
      assert.equal(main.evidence.api, 'crypto.pbkdf2Sync', summary);
    });
  }
});
