import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serialization } from '../../src/analyze/serialization.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const cwd = '/srv/app';

for (const noise of NOISE_LEVELS) {
  test(`serialization: JSON.stringify at 45 % of CPU names the caller (noise ${noise})`, () => {
    const cpu = syntheticCpuProfile([
      { name: 'sendReport', file: 'api.js', line: 30, share: 0.05, callee: { name: 'JSON.stringify', file: '', share: 0.45 } },
      { name: 'auth', file: 'api.js', line: 5, share: 0.1 },
    ], { cwd });
    for (const seed of SEEDS) {
      const [f] = serialization(syntheticRun({ seed, noise, cwd, elu: 0.95, profiles: [cpu] }));
      assert.ok(f);
      assert.equal(f.category, 'serialization');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['sendReport', 'api.js', 30]);
      assert.ok(Math.abs((f.evidence.jsonShare as number) - 0.45 / 0.95) < 0.05);
    }
  });

  test(`serialization: a little JSON in a busy server is fine (noise ${noise})`, () => {
    const cpu = syntheticCpuProfile([
      { name: 'handler', file: 'api.js', line: 3, share: 0.3, callee: { name: 'JSON.stringify', file: '', share: 0.05 } },
    ], { cwd });
    for (const seed of SEEDS) assert.deepEqual(serialization(syntheticRun({ seed, noise, cwd, elu: 0.95, profiles: [cpu] })), []);
  });
}

test('serialization: mostly JSON.parse gets the parse-once advice, not the stringify one', () => {
  const cpu = syntheticCpuProfile([
    { name: 'validateOrder', file: 'lib/validate.js', line: 14, share: 0.05, callee: { name: 'JSON.parse', file: '', share: 0.6 } },
  ], { cwd });
  const [f] = serialization(syntheticRun({ cwd, elu: 0.95, profiles: [cpu] }));
  assert.equal(f.culprit?.function, 'validateOrder');
  assert.equal(f.evidence.mostlyParse, true);
  assert.match(f.recommendation, /parse once/);
  assert.doesNotMatch(f.recommendation, /fast-json-stringify/);
});
