import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ioWait } from '../../src/analyze/io-wait.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

for (const noise of NOISE_LEVELS) {
  test(`io-wait: 80 ms requests on an idle loop, waiting on outgoing sockets (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const run = syntheticRun({ seed, noise, rps: 600, elu: 0.15, cores: 0.15, latencyMs: 80, resources: { TCPSocketWrap: 100 } });
      const [f] = ioWait(run);
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'io-wait');
      assert.ok((f.evidence.waitShare as number) > 0.9);
      assert.equal((f.evidence.awaiting as { type: string }[])[0].type, 'TCPSocketWrap');
    }
  });

  test(`io-wait: fast requests on an idle loop, and slow requests on a busy loop, are not I/O wait (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      assert.deepEqual(ioWait(syntheticRun({ seed, noise, rps: 600, elu: 0.1, latencyMs: 1.2 })), []);
      assert.deepEqual(ioWait(syntheticRun({ seed, noise, rps: 100, elu: 0.98, cores: 1, latencyMs: 400 })), []);
    }
  });
}

test('io-wait: on a CPU-starved machine the CPU actually used, not the inflated ELU, says the loop was idle', () => {
  const [f] = ioWait(syntheticRun({ rps: 300, elu: 0.6, cores: 0.15, latencyMs: 60 }));
  assert.equal(f?.category, 'io-wait');
});
