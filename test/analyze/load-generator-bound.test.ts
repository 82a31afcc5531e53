import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGeneratorBound } from '../../src/analyze/load-generator-bound.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';

test('load-generator-bound: a saturated generator is an info finding that says the numbers are a lower bound', () => {
  const [f] = loadGeneratorBound(syntheticRun({ generatorSaturated: true, elu: 0.4 }));
  assert.equal(f.category, 'load-generator-bound');
  assert.equal(f.severity, 'info');
  assert.equal(f.evidence.serverEluMean, 0.4);
  assert.match(f.title, /lower bound/);
});

test('load-generator-bound: quiet when the generator kept up', () => {
  assert.deepEqual(loadGeneratorBound(syntheticRun({})), []);
});
