// Issue 18, "missing data is a finding, never healthy": a real server that dies mid-load (an
// uncaught exception, process.exit(3), process.exit(0)) is diagnosed as such on 127.0.0.1: the
// finding that ended the run leads, names the error and the function that threw, and the terminal,
// report.json and report.md say it; never "healthy".

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report } from '../../src/report/report-schema.js';
import { apps, onlyRunDir, readMeta, runCli, survivors, tempOut } from '../run/helpers/run-cli.js';

async function crashRun(env: Record<string, string>) {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', '-w', '1', '-c', '4', '-d', '4', '--out', tmp.out, '--', 'node', 'crash-server.cjs'], { cwd: apps, env });
  const dir = onlyRunDir(tmp.out);
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
  return { r, dir, meta: readMeta(dir), report, md: readFileSync(join(dir, 'report.md'), 'utf8') };
}

describe('issue 18: a target that ended during the run', () => {
  test('an uncaught exception on request 300: critical, the throwing function named, never healthy', async () => {
    const { r, meta, report, md } = await crashRun({ CRASH_AFTER: '300' });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(meta.outcome.status, 'target-crashed');
    assert.equal(typeof meta.outcome.at, 'number', 'when it ended is recorded');
    const [f] = report.findings;
    assert.equal(f.code, 'HOTPATH_TARGET_ENDED', report.findings.map((x) => x.code).join());
    assert.equal(f.severity, 'critical');
    assert.equal(f.evidence.kind, 'uncaught-exception');
    assert.match(String(f.evidence.error), /fixture crash: the database connection vanished/);
    assert.equal(f.culprit?.function, 'crash');
    assert.equal(f.culprit?.file, 'crash-server.cjs');
    assert.ok(Number(f.evidence.requestsAnswered) >= 299, `answered ${f.evidence.requestsAnswered}`);
    assert.ok(!report.findings.some((x) => x.code === 'HOTPATH_HEALTHY'));
    assert.match(r.stderr, /crashed on an uncaught exception/);
    assert.match(md, /\*\*Verdict:\*\* \d+ problems? found\. Main: The server crashed on an uncaught exception/);
    assert.deepEqual(survivors(meta), []);
  });

  for (const code of [3, 0]) {
    test(`process.exit(${code}) in a handler: said as such, never healthy`, async () => {
      const { r, meta, report } = await crashRun({ CRASH_AFTER: '300', CRASH_WITH: 'exit', CRASH_CODE: String(code) });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(meta.outcome.status, code === 0 ? 'target-exited' : 'target-crashed');
      const [f] = report.findings;
      assert.equal(f.code, 'HOTPATH_TARGET_ENDED', report.findings.map((x) => x.code).join());
      assert.equal(f.evidence.kind, code === 0 ? 'exit' : 'exit-call');
      assert.equal(f.evidence.exitCode, code);
      assert.ok(!report.findings.some((x) => x.code === 'HOTPATH_HEALTHY'));
      assert.match(r.stderr, new RegExp(`exited (with code ${code}|\\(code 0\\))`));
    });
  }

  test('a server that closes its listener right after listening: the refusal is said as such, the run fails', async () => {
    const tmp = tempOut();
    after(tmp.cleanup);
    const file = join(tmp.out, 'closes.cjs');
    writeFileSync(
      file,
      "const s = require('node:http').createServer((q, r) => r.end()); s.listen(0, '127.0.0.1', () => s.close()); setInterval(() => {}, 1000);\n",
    );
    const r = await runCli(['run', '-w', '1', '-c', '2', '-d', '2', '--out', join(tmp.out, 'runs'), '--', 'node', file], { cwd: apps });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /HOTPATH_ERR_CONNECT: pid \d+ listened on 127\.0\.0\.1:\d+ and still runs, yet refuses connections there \(ECONNREFUSED\)/,
    );
    const meta = readMeta(onlyRunDir(join(tmp.out, 'runs')));
    assert.equal(meta.outcome.status, 'failed');
    assert.deepEqual(survivors(meta), []);
  });
});
