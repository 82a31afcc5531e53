// docs/run.md documents every flag `hotpath run` declares, so the reference cannot drift.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runOptionSpecs } from '../../src/run/run-options.js';
import { undocumentedFlags } from '../options/documented-flags.js';

const doc = readFileSync(new URL('../../../docs/run.md', import.meta.url), 'utf8');

test('every flag of hotpath run is in docs/run.md', () => {
  assert.deepEqual(undocumentedFlags(runOptionSpecs, doc), []);
});
