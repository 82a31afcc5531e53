// The guard as a whole: no timer keeps the process alive, exempt matching, shed counting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage } from 'node:http';
import { protect } from '../../src/protect/index.js';

const entry = fileURLToPath(new URL('../../src/protect/index.js', import.meta.url));

test('a process that creates protect() and does nothing else exits on its own', () => {
  const code = `import(${JSON.stringify(entry)}).then((m) => { m.protect({ maxEventLoopUtilization: 0.9, maxHeapUsedBytes: 1e9, maxRssBytes: 1e9 }); })`;
  const r = spawnSync(process.execPath, ['-e', code], { timeout: 10_000, encoding: 'utf8' });
  assert.equal(r.error, undefined, 'the child exits before the timeout');
  assert.equal(r.status, 0, r.stderr);
});

function fakeReq(url: string): IncomingMessage {
  return { url, headers: {} } as IncomingMessage;
}

test('exempt paths, patterns and predicates are never shed; others are, and counted', async (t) => {
  // A 1-byte heap limit trips at the first sample window, so every request is due to be shed.
  const paths = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, exempt: ['/health', /^\/metrics/] });
  const pred = protect({ maxHeapUsedBytes: 1, sampleInterval: 20, exempt: (req) => req.headers['x-probe'] === '1' });
  t.after(() => { paths.close(); pred.close(); });
  while (!paths.isUnderPressure() || !pred.isUnderPressure()) await new Promise((r) => setTimeout(r, 20));
  assert.equal(paths.shouldShed(fakeReq('/health?full=1')), null);
  assert.equal(paths.shouldShed(fakeReq('/metrics/prom')), null);
  assert.equal(paths.shouldShed(fakeReq('/api')), 'heapUsedBytes');
  assert.equal(paths.status().shed, 1);
  const probe = { url: '/x', headers: { 'x-probe': '1' } } as unknown as IncomingMessage;
  assert.equal(pred.shouldShed(probe), null);
  assert.equal(pred.shouldShed(fakeReq('/x')), 'heapUsedBytes');
});
