// io-wait on messages the app sends to a child process over IPC or to a worker thread and awaits
// the answer of (the message-waits hook), from synthetic telemetry: the loop that serialises one
// round trip per item, the function that waits when a request sends one message, and no claim
// when the messages explain little of the requests' time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ioWait } from '../../src/analyze/io-wait.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';

function app(): { dir: string; stack: { function: string; file: string; line: number; column: number; functionLine?: number }[] } {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-messages-'));
  writeFileSync(
    join(dir, 'geo.js'),
    [
      'function lookup(child, ip) {',
      '  return new Promise((resolve) => { pending.set(ip, resolve); child.send({ ip }); });',
      '}',
      'async function regionsOf(child, visits) {',
      '  const out = [];',
      '  for (const v of visits) {',
      '    out.push(await lookup(child, v.ip));',
      '  }',
      '  return out;',
      '}',
    ].join('\n'),
  );
  const file = join(dir, 'geo.js');
  const send = { function: 'lookup', file, line: 2, column: 70, functionLine: 1 };
  const loop = { function: 'regionsOf', file, line: 7, column: 20, functionLine: 4 };
  return { dir, stack: [send, loop] };
}

test('io-wait: one IPC round trip per item, awaited in a loop, names the loop and the child process', () => {
  const { dir, stack } = app();
  // Twelve 5 ms round trips per request, one after another: 60 ms requests (15 in flight: 250 req/s).
  const run = syntheticRun({
    rps: 250,
    elu: 0.1,
    cores: 0.1,
    latencyMs: 60,
    inFlight: 15,
    resources: { PipeWrap: 2 },
    cwd: dir,
    messageWaits: [{ target: 'child process geoip-helper.js', perRequest: 12, msEach: 5, site: stack[0], stack }],
  });
  const [f] = ioWait(run);
  assert.equal(f.category, 'io-wait');
  assert.equal(f.title, 'Requests spend their time waiting for answers from a child process geoip-helper.js');
  assert.deepEqual(f.culprit, { function: 'regionsOf', file: 'geo.js', line: 6 });
  assert.equal(f.evidence.sequential, true);
  assert.equal((f.evidence.waitsIn as { function: string }).function, 'lookup');
  const upstream = f.evidence.upstream as Record<string, unknown>;
  assert.equal(upstream.api, 'ipc');
  assert.equal(upstream.origin, 'child process geoip-helper.js');
  assert.ok(Math.abs((upstream.callsPerRequest as number) - 12) < 0.5, String(upstream.callsPerRequest));
  assert.match(f.summary, /Messages sent over IPC to the child process geoip-helper\.js from lookup \(geo\.js:2\) waited 5 ms each/);
  assert.match(f.summary, /awaited once per item by the loop at geo\.js:6 in regionsOf/);
  assert.match(f.recommendation, /Promise\.all/);
  assert.match(f.recommendation, /one message/);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: one message per request to a worker thread is the wait, in the function that sends it', () => {
  const { dir, stack } = app();
  const run = syntheticRun({
    rps: 300,
    elu: 0.08,
    cores: 0.08,
    latencyMs: 40,
    inFlight: 12,
    cwd: dir,
    messageWaits: [{ target: 'worker thread', perRequest: 1, msEach: 38, site: stack[0], stack: [stack[0]] }],
  });
  const [f] = ioWait(run);
  assert.equal(f.culprit?.function, 'lookup');
  assert.equal(f.evidence.sequential, undefined);
  assert.match(f.summary, /Messages posted to the worker thread from lookup/);
  rmSync(dir, { recursive: true, force: true });
});

test('io-wait: messages that explain little of the requests time are not named', () => {
  const { dir, stack } = app();
  const run = syntheticRun({
    rps: 300,
    elu: 0.08,
    cores: 0.08,
    latencyMs: 40,
    inFlight: 12,
    cwd: dir,
    messageWaits: [{ target: 'child process geoip-helper.js', perRequest: 1, msEach: 2, site: stack[0], stack }],
  });
  const [f] = ioWait(run);
  assert.equal(f.category, 'io-wait');
  assert.equal(f.culprit, undefined);
  assert.equal(f.evidence.upstream, undefined);
  rmSync(dir, { recursive: true, force: true });
});
